// The qa and mlm recipes end to end on tiny models: masked-LM pretraining, then fine-tuning its
// checkpoint for classification and for question answering (new heads initialised and logged
// as transformers does), QA prediction files, both on RoBERTa with byte-level BPE, and the
// recipes' bad inputs.
#include <gtest/gtest.h>

#include <cmath>

#include "cli_test_util.h"
#include "kiln/io/squad_dataset.h"
#include "kiln/models/model_family.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using testing::read_json;
using testing::run_kiln;
using testing::write_questions;
using testing::write_text_corpus;

// The flags of the recipes' small runs.
const std::string common = " --per_device_train_batch_size 4 --learning_rate 1e-2"
                           " --disable_tqdm --seed 3 --save_strategy no";

// kiln train --task mlm from the model of the flags `model` on a generated corpus of 40 lines
// (dir/corpus.txt, 20% held out), into dir/mlm.
testing::CommandResult pretrain_masked_lm(const fs::path& dir, const std::string& model) {
  return run_kiln("train --task mlm " + model + common + " --train_file " +
                  write_text_corpus(dir).string() +
                  " --max_seq_length 8 --validation_split_percentage 20 --do_eval --output_dir " +
                  (dir / "mlm").string());
}

TEST(CliTasks, PretrainMaskedLmThenFineTuneForClassificationAndQa) {
  fs::path dir = testing::scratch_folder();
  std::string model = testing::write_tiny_model_files(dir / "model");
  fs::path mlm = dir / "mlm";
  testing::CommandResult pretrained = pretrain_masked_lm(dir, model);
  ASSERT_EQ(pretrained.exit_code, 0) << pretrained.output;
  EXPECT_NE(pretrained.output.find("validation: holding out 8 of the 40 lines"), std::string::npos)
      << pretrained.output;
  EXPECT_EQ(bert_config_read((mlm / "config.json").string()).architectures,
            std::vector<std::string>{"BertForMaskedLM"});
  nlohmann::json eval = read_json(mlm / "eval_results.json");
  EXPECT_DOUBLE_EQ(eval["perplexity"].get<double>(), std::exp(eval["eval_loss"].get<double>()));

  fs::path tsv = testing::write_sentiment_tsv(dir / "train.tsv", 24, 21);
  testing::CommandResult classifier = run_kiln(
      "train --model_name_or_path " + mlm.string() + common + " --train_file " + tsv.string() +
      " --no_header --column_names label,source,text --max_seq_length 16 --num_train_epochs 1"
      " --output_dir " + (dir / "classifier").string());
  ASSERT_EQ(classifier.exit_code, 0) << classifier.output;
  EXPECT_NE(classifier.output.find(
                "were not used when initializing BertForSequenceClassification: "
                "['cls.predictions.bias', 'cls.predictions.transform.LayerNorm.bias'"),
            std::string::npos)
      << classifier.output;
  EXPECT_NE(classifier.output.find(
                "Some weights of BertForSequenceClassification were not initialized from the "
                "model checkpoint at " + mlm.string() + " and are newly initialized: "
                "['bert.pooler.dense.bias', 'bert.pooler.dense.weight', 'classifier.bias', "
                "'classifier.weight']"),
            std::string::npos)
      << classifier.output;

  fs::path questions = write_questions(dir);
  fs::path qa = dir / "qa";
  testing::CommandResult answered = run_kiln(
      "train --task qa --version_2_with_negative --model_name_or_path " + mlm.string() + common +
      " --train_file " + questions.string() + " --validation_file " + questions.string() +
      " --test_file " + questions.string() +
      " --max_seq_length 16 --doc_stride 4 --num_train_epochs 1 --do_eval --do_predict"
      " --output_dir " + qa.string());
  ASSERT_EQ(answered.exit_code, 0) << answered.output;
  EXPECT_NE(answered.output.find("Some weights of BertForQuestionAnswering were not initialized "
                                 "from the model checkpoint at " + mlm.string() +
                                 " and are newly initialized: ['qa_outputs.bias', "
                                 "'qa_outputs.weight']"),
            std::string::npos)
      << answered.output;
  nlohmann::json results = read_json(qa / "eval_results.json");
  for (const char* key : {"eval_exact", "eval_f1", "eval_HasAns_exact", "eval_NoAns_exact",
                          "eval_best_f1_thresh", "eval_samples"}) {
    EXPECT_TRUE(results.contains(key)) << key;
  }
  EXPECT_EQ(results["eval_total"], 12);
  EXPECT_EQ(results["eval_HasAns_total"], 8);
  nlohmann::json predictions = read_json(qa / "predict_predictions.json");
  nlohmann::json odds = read_json(qa / "predict_null_odds.json");
  EXPECT_EQ(predictions.size(), 12u);
  EXPECT_EQ(odds.size(), 12u);
  EXPECT_TRUE(predictions.contains("q11"));
  // --do_eval writes run_qa.py's eval_ files; the same model on the same file answers alike.
  EXPECT_EQ(read_json(qa / "eval_predictions.json"), predictions);
  EXPECT_EQ(read_json(qa / "eval_null_odds.json"), odds);
  nlohmann::json nbest = read_json(qa / "eval_nbest_predictions.json");
  EXPECT_EQ(nbest, read_json(qa / "predict_nbest_predictions.json"));
  ASSERT_EQ(nbest.size(), 12u);
  for (const auto& [id, candidates] : nbest.items()) {
    ASSERT_TRUE(candidates.is_array() && !candidates.empty()) << id;
    for (const nlohmann::json& candidate : candidates) {
      EXPECT_EQ(candidate.size(), 4u) << candidate.dump();
      for (const char* key : {"start_logit", "end_logit", "probability"}) {
        EXPECT_TRUE(candidate[key].is_number()) << candidate.dump();
      }
      EXPECT_TRUE(candidate["text"].is_string()) << candidate.dump();
    }
  }
  EXPECT_EQ(bert_config_read((qa / "config.json").string()).architectures,
            std::vector<std::string>{"BertForQuestionAnswering"});

  // The saved QA model evaluates on its own (kiln evaluate, the task read from its
  // architectures), giving the same scores.
  testing::CommandResult evaluated = run_kiln(
      "evaluate --version_2_with_negative --model_name_or_path " + qa.string() +
      " --validation_file " + questions.string() + " --max_seq_length 16 --doc_stride 4"
      " --output_dir " + (dir / "qa-eval").string());
  ASSERT_EQ(evaluated.exit_code, 0) << evaluated.output;
  EXPECT_NE(evaluated.output.find("--task qa (the model's, from " + (qa / "config.json").string()),
            std::string::npos)
      << evaluated.output;
  nlohmann::json again = read_json(dir / "qa-eval" / "eval_results.json");
  EXPECT_EQ(again["eval_f1"], results["eval_f1"]);
  EXPECT_EQ(again["eval_exact"], results["eval_exact"]);
  EXPECT_EQ(read_json(dir / "qa-eval" / "eval_predictions.json"), predictions);
}

// The same recipes on RoBERTa with its byte-level BPE tokenizer (tests/fixtures/tokenizer_bpe):
// masked-LM pretraining masks with <mask>, and question answering maps answers through
// byte-level offsets, which exclude a token's leading space (trim_offsets).
TEST(CliTasks, RobertaPretrainsThenAnswersQuestions) {
  fs::path dir = testing::scratch_folder();
  std::string model = testing::write_tiny_family_model(dir / "model", "roberta");
  fs::path mlm = dir / "mlm";
  testing::CommandResult pretrained = pretrain_masked_lm(dir, model);
  ASSERT_EQ(pretrained.exit_code, 0) << pretrained.output;
  std::unique_ptr<PretrainedConfig> config = model_config_read((mlm / "config.json").string());
  EXPECT_EQ(config->architectures, std::vector<std::string>{"RobertaForMaskedLM"});
  nlohmann::json eval = read_json(mlm / "eval_results.json");
  EXPECT_DOUBLE_EQ(eval["perplexity"].get<double>(), std::exp(eval["eval_loss"].get<double>()));

  fs::path questions = write_questions(dir);
  fs::path qa = dir / "qa";
  testing::CommandResult answered = run_kiln(
      "train --task qa --version_2_with_negative --model_name_or_path " + mlm.string() + common +
      " --train_file " + questions.string() + " --test_file " + questions.string() +
      " --max_seq_length 16 --doc_stride 4 --num_train_epochs 1 --do_predict --output_dir " +
      qa.string());
  ASSERT_EQ(answered.exit_code, 0) << answered.output;
  // transformers' names: RoBERTa's masked-LM head is lm_head, its span head qa_outputs.
  EXPECT_NE(answered.output.find("were not used when initializing RobertaForQuestionAnswering: "
                                 "['lm_head.bias', 'lm_head.dense.bias'"),
            std::string::npos)
      << answered.output;
  EXPECT_NE(answered.output.find("Some weights of RobertaForQuestionAnswering were not "
                                 "initialized from the model checkpoint at " + mlm.string() +
                                 " and are newly initialized: ['qa_outputs.bias', "
                                 "'qa_outputs.weight']"),
            std::string::npos)
      << answered.output;
  EXPECT_EQ(model_config_read((qa / "config.json").string())->architectures,
            std::vector<std::string>{"RobertaForQuestionAnswering"});
  // Every candidate answer is a span of its context between token boundaries, which for
  // byte-level BPE with trim_offsets lie after a word's space, never on it.
  EXPECT_EQ(read_json(qa / "predict_predictions.json").size(), 12u);
  nlohmann::json nbest = read_json(qa / "predict_nbest_predictions.json");
  size_t spans = 0;
  for (const SquadExample& example : load_squad(questions.string()).examples) {
    for (const nlohmann::json& candidate : nbest.at(example.id)) {
      const std::string text = candidate["text"].get<std::string>();
      if (text.empty()) continue;  // the null answer (version 2)
      ++spans;
      EXPECT_NE(example.context.find(text), std::string::npos) << example.id << ": " << text;
      EXPECT_TRUE(text.front() != ' ' && text.back() != ' ') << example.id << ": '" << text << "'";
    }
  }
  EXPECT_GT(spans, 12u);
}

TEST(CliTasks, RecipeInputErrorsNameTheFlagOrFile) {
  fs::path dir = testing::scratch_folder();
  std::string model = testing::write_tiny_model_files(dir / "model");
  fs::path questions = write_questions(dir);
  testing::CommandResult v1 = run_kiln("train --task qa " + model + " --train_file " +
                                       questions.string() + " --max_seq_length 16 --doc_stride 4"
                                       " --output_dir " + (dir / "out").string());
  EXPECT_EQ(v1.exit_code, 1);
  EXPECT_NE(v1.output.find("[" + questions.string() + "] has questions without answers (SQuAD "
                           "v2.0); add --version_2_with_negative"),
            std::string::npos)
      << v1.output;
  testing::CommandResult stride = run_kiln("train --task qa " + model + " --train_file " +
                                           questions.string() + " --max_seq_length 16"
                                           " --output_dir " + (dir / "out").string());
  EXPECT_EQ(stride.exit_code, 2);  // a usage error
  EXPECT_NE(stride.output.find("[--doc_stride] must lie in [0, max_seq_length): 128"),
            std::string::npos)
      << stride.output;
  testing::CommandResult predict_mlm = run_kiln(
      "train --task mlm " + model + " --train_file " + questions.string() +
      " --do_predict --output_dir " + (dir / "out").string());
  EXPECT_EQ(predict_mlm.exit_code, 2);
  EXPECT_NE(predict_mlm.output.find("[--do_predict] mlm has no prediction step"),
            std::string::npos)
      << predict_mlm.output;
}

}  // namespace
}  // namespace kiln
