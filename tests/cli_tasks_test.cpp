// The recipes end to end on tiny models: masked-LM pretraining, then fine-tuning its checkpoint
// for classification and for question answering (new heads initialised and logged as transformers
// does), QA prediction files, both on RoBERTa with byte-level BPE; causal-LM training and
// evaluation against transformers' Trainer (tests/data/clm, by
// tests/fixtures_gen/make_clm_fixtures.py) then generation from the result; token classification
// on the shipped NER set; qa's default sequence length (run_qa.py's); and the recipes' bad inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

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

// Eval loss, perplexity and accuracy of a run (eval_results.json) against transformers' over
// `predictions` next tokens.
void expect_clm_metrics(const nlohmann::json& results, const nlohmann::json& expected,
                        int predictions) {
  EXPECT_NEAR(results["eval_loss"].get<double>(), expected["eval_loss"].get<double>(), 1e-4);
  EXPECT_NEAR(results["perplexity"].get<double>(), expected["perplexity"].get<double>(),
              1e-4 * expected["perplexity"].get<double>());
  // One prediction apart at most, were an argmax a near tie.
  EXPECT_NEAR(results["eval_accuracy"].get<double>(), expected["eval_accuracy"].get<double>(),
              1.0 / predictions);
}

TEST(CliTasks, CausalLmTrainsAsTransformersTrainerHalvesPerplexityAndGenerates) {
  const fs::path source(KILN_SOURCE_DIR);
  const nlohmann::json expected = read_json(source / "tests/data/clm/hf_clm_reference.json");
  const nlohmann::json& hf = expected["arguments"];
  const int block = expected["block_size"];
  const int eval_blocks = expected["max_eval_samples"];
  const fs::path dir = testing::scratch_folder();
  const std::string data =
      " --model_name_or_path " + (source / "tests/data/clm/tiny_gpt2").string() +
      " --tokenizer_name " + (source / expected["tokenizer"].get<std::string>()).string() +
      " --train_file " + (source / expected["text"].get<std::string>()).string() +
      " --block_size " + std::to_string(block) + " --max_eval_samples " +
      std::to_string(eval_blocks) + " --per_device_eval_batch_size " +
      hf["per_device_eval_batch_size"].dump() + " --disable_tqdm";

  // The task comes from the model's architectures (GPT2LMHeadModel).
  testing::CommandResult before =
      run_kiln("evaluate" + data + " --output_dir " + (dir / "before").string() + " 2>&1");
  ASSERT_EQ(before.exit_code, 0) << before.output;
  const nlohmann::json initial = read_json(dir / "before" / "eval_results.json");
  expect_clm_metrics(initial, expected["eval_before_training"], eval_blocks * (block - 1));

  auto flag = [&](const char* name) { return std::string(" --") + name + " " + hf[name].dump(); };
  testing::CommandResult train = run_kiln(
      "train --task clm --do_eval" + data + " --max_train_samples " +
      std::to_string(expected["max_train_samples"].get<int>()) +
      flag("per_device_train_batch_size") + flag("learning_rate") + flag("weight_decay") +
      flag("warmup_steps") + flag("max_grad_norm") + flag("max_steps") + flag("logging_steps") +
      flag("seed") + " --train_sampling_strategy sequential --output_dir " +
      (dir / "trained").string() + " 2>&1");
  ASSERT_EQ(train.exit_code, 0) << train.output;
  const nlohmann::json state = read_json(dir / "trained" / "trainer_state.json");
  std::vector<nlohmann::json> steps;
  for (const nlohmann::json& entry : state["log_history"]) {
    if (entry.contains("loss")) steps.push_back(entry);
  }
  ASSERT_EQ(steps.size(), expected["loss"].size()) << train.output;
  for (size_t i = 0; i < steps.size(); ++i) {
    SCOPED_TRACE("step " + std::to_string(i + 1));
    EXPECT_NEAR(steps[i]["loss"].get<double>(), expected["loss"][i].get<double>(), 1e-4);
    const double norm = expected["grad_norm"][i];
    EXPECT_NEAR(steps[i]["grad_norm"].get<double>(), norm, 1e-4 * std::max(1.0, norm));
    EXPECT_NEAR(steps[i]["learning_rate"].get<double>(),
                expected["learning_rate"][i].get<double>(), 1e-12);
  }
  const nlohmann::json trained = read_json(dir / "trained" / "eval_results.json");
  expect_clm_metrics(trained, expected["eval_after_training"], eval_blocks * (block - 1));
  EXPECT_LE(trained["perplexity"].get<double>(), initial["perplexity"].get<double>() / 2);

  testing::CommandResult generated =
      run_kiln("generate --model_name_or_path " + (dir / "trained").string() +
               " --prompt 'Anne was' --max_new_tokens 8 2>&1");
  ASSERT_EQ(generated.exit_code, 0) << generated.output;
  EXPECT_GT(generated.output.size(), 1u) << generated.output;  // a continuation and "\n"
}

// Without --max_seq_length, qa takes run_qa.py's 384 tokens, which its default --doc_stride of
// 128 fits (the other tasks' 128 would not); the run's arguments record it.
TEST(CliTasks, QaDefaultsToRunQasSequenceLength) {
  fs::path dir = testing::scratch_folder();
  fs::create_directories(dir / "model");
  fs::path vocab = testing::write_vocab(dir / "model");
  BertConfig config = testing::tiny_config(tokenizer_load_vocab(vocab.string()).vocab_size());
  config.max_position_embeddings = 384;
  bert_config_write((dir / "model" / "config.json").string(), config);
  testing::CommandResult trained = run_kiln(
      "train --task qa --version_2_with_negative --config_name " +
      (dir / "model" / "config.json").string() + " --tokenizer_name " + vocab.string() +
      " --train_file " + write_questions(dir).string() +
      " --per_device_train_batch_size 4 --disable_tqdm --max_steps 1 --save_steps 1"
      " --output_dir " + (dir / "out").string());
  ASSERT_EQ(trained.exit_code, 0) << trained.output;
  const nlohmann::json args = read_json(dir / "out" / "checkpoint-1" / "training_args.json");
  EXPECT_EQ(args["max_seq_length"], 384);
  EXPECT_EQ(args["doc_stride"], 128);
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
  const fs::path source(KILN_SOURCE_DIR);
  testing::CommandResult predict_clm = run_kiln(
      "train --task clm --model_name_or_path " + (source / "tests/data/clm/tiny_gpt2").string() +
      " --tokenizer_name " + (source / "data/tokenizers/austen-bpe-1k").string() +
      " --train_file " + (source / "data/lm/persuasion.txt").string() +
      " --do_predict --output_dir " + (dir / "out").string());
  EXPECT_EQ(predict_clm.exit_code, 2);
  EXPECT_NE(predict_clm.output.find("[--do_predict] clm has no prediction step"),
            std::string::npos)
      << predict_clm.output;
}


// The first `count` rows of a run_ner.py JSON lines file.
std::vector<nlohmann::json> ner_rows(const fs::path& path, size_t count) {
  std::istringstream lines(testing::read_text(path));
  std::vector<nlohmann::json> rows;
  for (std::string line; rows.size() < count && std::getline(lines, line);) {
    rows.push_back(nlohmann::json::parse(line));
  }
  return rows;
}

// run_ner.py on the shipped Austen set: a tiny BERT trained for a second beats the majority tag
// (O everywhere: F1 0, and O's share of the tags as accuracy); the saved model evaluates alike
// (its task read from BertForTokenClassification) and predicts a file without tags, one line of
// tags per sentence and one tag per word, scored here against the file's own tags.
TEST(CliTasks, NerBeatsTheMajorityTagThenEvaluatesAndPredicts) {
  const fs::path dir = testing::scratch_folder();
  const fs::path root = KILN_SOURCE_DIR;
  const fs::path validation = root / "data/ner/austen-ner-validation.jsonl";
  BertConfig config = testing::tiny_config(8000);
  config.hidden_size = 32;
  config.intermediate_size = 64;
  config.max_position_embeddings = 64;
  bert_config_write((dir / "config.json").string(), config);
  // No sentence of the first 100 is longer than 64 tokens: every word is scored.
  const std::string data = " --max_seq_length 64 --per_device_eval_batch_size 50";
  testing::CommandResult trained = run_kiln(
      "train --task ner --config_name " + (dir / "config.json").string() +
      " --tokenizer_name " + (root / "data/vocab/austen-wordpiece-8k.txt").string() +
      " --train_file " + (root / "data/ner/austen-ner-train.jsonl").string() +
      " --validation_file " + validation.string() + data +
      " --max_train_samples 480 --max_eval_samples 100 --per_device_train_batch_size 16"
      " --learning_rate 2e-2 --num_train_epochs 1 --do_eval --disable_tqdm --seed 3"
      " --save_strategy no --output_dir " + (dir / "ner").string());
  ASSERT_EQ(trained.exit_code, 0) << trained.output;
  const BertConfig saved = bert_config_read((dir / "ner" / "config.json").string());
  EXPECT_EQ(saved.architectures, std::vector<std::string>{"BertForTokenClassification"});
  EXPECT_EQ(saved.id2label, (std::vector<std::string>{"B-LOC", "B-PER", "I-PER", "O"}));

  const std::vector<nlohmann::json> rows = ner_rows(validation, 100);
  size_t tags = 0, outside = 0;
  for (const nlohmann::json& row : rows) {
    for (const nlohmann::json& tag : row["ner_tags"]) {
      ++tags;
      outside += tag == "O" ? 1 : 0;
    }
  }
  const nlohmann::json eval = read_json(dir / "ner" / "eval_results.json");
  EXPECT_GT(eval["eval_f1"].get<double>(), 0.0) << eval.dump();
  EXPECT_GT(eval["eval_accuracy"].get<double>(), static_cast<double>(outside) / tags)
      << eval.dump();
  for (const char* key : {"eval_precision", "eval_recall", "eval_loss"}) {
    EXPECT_TRUE(eval.contains(key)) << key;
  }

  testing::CommandResult evaluated =
      run_kiln("evaluate --model_name_or_path " + (dir / "ner").string() + " --validation_file " +
               validation.string() + data + " --max_eval_samples 100 --output_dir " +
               (dir / "eval").string());
  ASSERT_EQ(evaluated.exit_code, 0) << evaluated.output;
  EXPECT_NE(evaluated.output.find("--task ner (the model's"), std::string::npos)
      << evaluated.output;
  const nlohmann::json again = read_json(dir / "eval" / "eval_results.json");
  EXPECT_EQ(again["eval_f1"], eval["eval_f1"]);
  EXPECT_EQ(again["eval_accuracy"], eval["eval_accuracy"]);

  std::string words;
  for (const nlohmann::json& row : rows) {
    words += nlohmann::json{{"tokens", row["tokens"]}}.dump() + "\n";
  }
  testing::write_text(dir / "words.jsonl", words);
  testing::CommandResult predicted =
      run_kiln("predict --model_name_or_path " + (dir / "ner").string() + " --test_file " +
               (dir / "words.jsonl").string() + data + " --output_dir " +
               (dir / "predict").string());
  ASSERT_EQ(predicted.exit_code, 0) << predicted.output;
  EXPECT_TRUE(read_json(dir / "predict" / "predict_results.json").contains("predict_runtime"));
  std::istringstream lines(testing::read_text(dir / "predict" / "predictions.txt"));
  size_t line_count = 0, right = 0;
  for (std::string line; std::getline(lines, line); ++line_count) {
    ASSERT_LT(line_count, rows.size());
    std::istringstream tags_of_line(line);
    const nlohmann::json& reference = rows[line_count]["ner_tags"];
    size_t word = 0;
    for (std::string tag; tags_of_line >> tag; ++word) {
      ASSERT_LT(word, reference.size()) << line;
      right += tag == reference[word] ? 1 : 0;
    }
    EXPECT_EQ(word, reference.size()) << line;
  }
  EXPECT_EQ(line_count, rows.size());
  EXPECT_DOUBLE_EQ(static_cast<double>(right) / tags, eval["eval_accuracy"].get<double>());
}

}  // namespace
}  // namespace kiln
