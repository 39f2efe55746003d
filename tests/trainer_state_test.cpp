// trainer_state.json: the exact text transformers writes, reading it back, errors naming the file.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "kiln/ir/error.h"
#include "kiln/train/trainer_state.h"
#include "support/testing.h"

namespace kiln {
namespace {

using testing::scratch_folder;
using testing::read_text;

namespace fs = std::filesystem;
using nlohmann::json;

// Written by transformers 5.24's own TrainerState.save_to_json for
//   TrainerState(epoch=1.0, global_step=4, max_steps=4, logging_steps=2, eval_steps=2,
//     save_steps=2, train_batch_size=8, num_train_epochs=1, num_input_tokens_seen=1024,
//     total_flos=1.2e16, best_metric=0.75, best_global_step=4,
//     best_model_checkpoint="out/checkpoint-4",
//     stateful_callbacks=[TrainerControl(should_save=True)])
// with the four log_history entries of sample_state() (a NaN loss included).
const char* const kHfStateText = R"({
  "best_global_step": 4,
  "best_metric": 0.75,
  "best_model_checkpoint": "out/checkpoint-4",
  "epoch": 1.0,
  "eval_steps": 2,
  "global_step": 4,
  "is_hyper_param_search": false,
  "is_local_process_zero": true,
  "is_world_process_zero": true,
  "log_history": [
    {
      "epoch": 0.5,
      "grad_norm": 3.2171192169189453,
      "learning_rate": 2.5e-05,
      "loss": 0.6931,
      "step": 2
    },
    {
      "epoch": 0.5,
      "eval_accuracy": 0.5,
      "eval_loss": 0.6925548315048218,
      "eval_runtime": 0.1234,
      "eval_samples_per_second": 129.668,
      "eval_steps_per_second": 16.208,
      "step": 2
    },
    {
      "epoch": 1.0,
      "grad_norm": 1.0,
      "learning_rate": 1e-05,
      "loss": NaN,
      "step": 4
    },
    {
      "epoch": 1.0,
      "step": 4,
      "total_flos": 1.2e+16,
      "train_loss": 0.6931,
      "train_runtime": 1.5,
      "train_samples_per_second": 21.333,
      "train_steps_per_second": 2.667
    }
  ],
  "logging_steps": 2,
  "max_steps": 4,
  "num_input_tokens_seen": 1024,
  "num_train_epochs": 1,
  "save_steps": 2,
  "stateful_callbacks": {
    "TrainerControl": {
      "args": {
        "should_epoch_stop": false,
        "should_evaluate": false,
        "should_log": false,
        "should_save": true,
        "should_training_stop": false
      },
      "attributes": {}
    }
  },
  "total_flos": 1.2e+16,
  "train_batch_size": 8,
  "trial_name": null,
  "trial_params": null
}
)";

TrainerState sample_state() {
  TrainerState state;
  state.epoch = 1.0;
  state.global_step = 4;
  state.max_steps = 4;
  state.logging_steps = 2;
  state.eval_steps = 2;
  state.save_steps = 2;
  state.train_batch_size = 8;
  state.num_train_epochs = 1;
  state.num_input_tokens_seen = 1024;
  state.total_flos = 1.2e16;
  state.best_metric = 0.75;
  state.best_global_step = 4;
  state.best_model_checkpoint = "out/checkpoint-4";
  state.stateful_callbacks = {{"TrainerControl",
                               {{"args",
                                 {{"should_epoch_stop", false},
                                  {"should_evaluate", false},
                                  {"should_log", false},
                                  {"should_save", true},
                                  {"should_training_stop", false}}},
                                {"attributes", json::object()}}}};
  state.log_history.push_back(log_history_entry(
      {{"loss", 0.6931}, {"grad_norm", 3.2171192169189453}, {"learning_rate", 2.5e-05}}, 0.5, 2));
  state.log_history.push_back(log_history_entry({{"eval_loss", 0.6925548315048218},
                                                 {"eval_accuracy", 0.5},
                                                 {"eval_runtime", 0.1234},
                                                 {"eval_samples_per_second", 129.668},
                                                 {"eval_steps_per_second", 16.208}},
                                                0.5, 2));
  state.log_history.push_back(
      log_history_entry({{"loss", std::numeric_limits<double>::quiet_NaN()},
                         {"grad_norm", 1.0},
                         {"learning_rate", 1e-05}},
                        1.0, 4));
  state.log_history.push_back(log_history_entry({{"train_runtime", 1.5},
                                                 {"train_samples_per_second", 21.333},
                                                 {"train_steps_per_second", 2.667},
                                                 {"total_flos", 1.2e16},
                                                 {"train_loss", 0.6931}},
                                                1.0, 4));
  return state;
}

TEST(TrainerState, WritesTheTextTransformersWrites) {
  EXPECT_EQ(trainer_state_to_json(sample_state()), kHfStateText);
}

TEST(TrainerState, DefaultsMatchTheDataclass) {
  // transformers 4.x writes "epoch": null for a fresh state (5.x: 0); total_flos starts a float
  // here because every state the Trainer saves has trained.
  std::string text = trainer_state_to_json(TrainerState{});
  EXPECT_NE(text.find("\n  \"epoch\": null,\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\n  \"log_history\": [],\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\n  \"logging_steps\": 500,\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\n  \"stateful_callbacks\": {},\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\n  \"total_flos\": 0.0,\n"), std::string::npos) << text;
  EXPECT_TRUE(text.ends_with("\"trial_params\": null\n}\n")) << text;
}

TEST(TrainerState, ReadsTransformersTextBackExactly) {
  TrainerState state = trainer_state_from_json(kHfStateText, "trainer_state.json");
  EXPECT_EQ(state.global_step, 4);
  EXPECT_EQ(state.epoch, 1.0);
  EXPECT_EQ(state.total_flos, 1.2e16);
  EXPECT_EQ(state.best_metric, 0.75);
  EXPECT_EQ(state.best_global_step, 4);
  EXPECT_EQ(state.best_model_checkpoint, "out/checkpoint-4");
  EXPECT_EQ(state.train_batch_size, 8);
  EXPECT_FALSE(state.trial_name.has_value());
  EXPECT_TRUE(state.trial_params.is_null());
  EXPECT_EQ(state.stateful_callbacks["TrainerControl"]["args"]["should_save"], true);
  ASSERT_EQ(state.log_history.size(), 4u);
  EXPECT_EQ(state.log_history[0]["learning_rate"].get<double>(), 2.5e-05);
  EXPECT_TRUE(state.log_history[0]["step"].is_number_integer());
  EXPECT_TRUE(std::isnan(state.log_history[2]["loss"].get<double>()));
  EXPECT_EQ(state.log_history[3]["train_steps_per_second"].get<double>(), 2.667);
  // Integers stay integers and floats floats, so the text comes back byte for byte.
  EXPECT_EQ(trainer_state_to_json(state), kHfStateText);
}

TEST(TrainerState, SavesAndLoadsAFile) {
  fs::path path = scratch_folder() / "trainer_state.json";
  trainer_state_save(sample_state(), path.string());
  EXPECT_EQ(read_text(path), kHfStateText);
  EXPECT_FALSE(fs::exists(path.string() + ".tmp"));
  TrainerState back = trainer_state_load(path.string());
  EXPECT_EQ(back.global_step, 4);
  EXPECT_EQ(back.log_history.size(), 4u);
}

TEST(TrainerState, MissingKeysKeepDefaultsAndUnknownKeysAreIgnored) {
  TrainerState state =
      trainer_state_from_json(R"({"global_step": 7, "a_future_field": [1, 2]})", "state.json");
  EXPECT_EQ(state.global_step, 7);
  EXPECT_EQ(state.logging_steps, 500);
  EXPECT_FALSE(state.epoch.has_value());
  EXPECT_TRUE(state.stateful_callbacks.is_object());
  // transformers 5.x writes "epoch": 0 for a fresh state.
  EXPECT_EQ(trainer_state_from_json(R"({"epoch": 0})", "state.json").epoch, 0.0);
}

void expect_error(const std::string& text, const std::string& message) {
  try {
    trainer_state_from_json(text, "ckpt/trainer_state.json");
    ADD_FAILURE() << "no error for " << text;
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), message);
  }
}

TEST(TrainerState, MalformedInputNamesTheFileAndTheKey) {
  expect_error(R"({"global_step": "4"})",
               "[ckpt/trainer_state.json] \"global_step\" must be an integer, got string \"4\"");
  expect_error(R"({"global_step": 4.5})",
               "[ckpt/trainer_state.json] \"global_step\" must be an integer, got number 4.5");
  expect_error(R"({"log_history": [{"loss": 1.0}, 3]})",
               "[ckpt/trainer_state.json] \"log_history[1]\" must be an object, got number 3");
  expect_error(R"({"is_hyper_param_search": 0})",
               "[ckpt/trainer_state.json] \"is_hyper_param_search\" must be true or false, got "
               "number 0");
  expect_error("[1, 2]",
               "[ckpt/trainer_state.json] trainer state must be a JSON object, got array");
  try {
    trainer_state_from_json("{\n  \"global_step\": 4,\n  \"epoch\": \n}",
                            "ckpt/trainer_state.json");
    ADD_FAILURE() << "no error for truncated JSON";
  } catch (const Error& e) {
    std::string message = e.what();
    EXPECT_TRUE(message.starts_with("[ckpt/trainer_state.json] invalid JSON: ")) << message;
    EXPECT_NE(message.find("line 4"), std::string::npos) << message;
  }
  try {
    trainer_state_load("/nonexistent/trainer_state.json");
    ADD_FAILURE() << "no error for a missing file";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "[/nonexistent/trainer_state.json] cannot open trainer state");
  }
}

TEST(TrainerState, LogHistoryEntryAddsEpochAndStepAsTrainerLog) {
  json entry = log_history_entry({{"loss", 0.5}}, std::nullopt, 3);
  EXPECT_EQ(entry, json({{"loss", 0.5}, {"step", 3}}));
  entry = log_history_entry({{"loss", 0.5}}, 0.25, 3);
  EXPECT_EQ(entry, json({{"epoch", 0.25}, {"loss", 0.5}, {"step", 3}}));
  EXPECT_THROW(log_history_entry(json::array(), 0.25, 3), Error);
}

}  // namespace
}  // namespace kiln
