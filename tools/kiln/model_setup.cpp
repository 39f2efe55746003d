// The model of a run: tokenizer and config from an HF folder or a named config, then weights
// loaded by state-dict name (reported as transformers does) or initialised from the seed.
#include <algorithm>
#include <array>
#include <filesystem>
#include <iostream>

#include "kiln/io/tokenizer_files.h"
#include "kiln/ir/error.h"
#include "kiln/ir/usage_error.h"
#include "kiln/models/bert_config.h"
#include "setup.h"

namespace kiln::cli {
namespace {

namespace fs = std::filesystem;

constexpr std::array<std::string_view, 6> kPresets = {"tiny",   "mini", "small",
                                                      "medium", "base", "large"};

// A tokenizer folder, a vocab.txt or a tokenizer.json.
Tokenizer load_tokenizer(const std::string& source, const char* flag) {
  check(fs::exists(source), flag, "no such file or folder: ", source);
  if (fs::is_directory(source)) return tokenizer_load(source);
  if (source.ends_with(".json")) return tokenizer_load_json(source);
  return tokenizer_load_vocab(source);
}

std::unique_ptr<PretrainedConfig> config_from_name(const std::string& name,
                                                   const Tokenizer& tokenizer) {
  if (fs::is_directory(name)) return model_config_read((fs::path(name) / "config.json").string());
  if (fs::exists(name)) return model_config_read(name);
  check(std::find(kPresets.begin(), kPresets.end(), name) != kPresets.end(), "--config_name", "'",
        name,
        "' is neither a config.json nor a named configuration (tiny, mini, small, "
        "medium, base, large)");
  // The presets are BERT's sizes; a new model's embeddings are sized by its tokenizer.
  auto config = std::make_unique<BertConfig>(bert_config_preset(name));
  config->vocab_size = tokenizer.vocab_size();
  config->pad_token_id = tokenizer.pad_id();
  return config;
}

// A WordPiece tokenizer whose files named no class takes the family's (as AutoTokenizer picks one
// by model_type), so that the folder Kiln saves loads as the family's tokenizer.
void name_tokenizer_class(std::optional<Tokenizer>& tokenizer, const ModelFamily& family) {
  const TokenizerConfig& config = tokenizer->config();
  if (config.model != TokenizerModel::wordpiece || !config.tokenizer_class.empty() ||
      family.wordpiece_tokenizer_class().empty()) {
    return;
  }
  TokenizerConfig named = config;
  named.tokenizer_class = family.wordpiece_tokenizer_class();
  tokenizer.emplace(std::move(named));
}

std::string name_list(const std::vector<std::string>& names) {
  std::string out = "[";
  for (size_t i = 0; i < names.size(); ++i) out += (i ? ", '" : "'") + names[i] + "'";
  return out + "]";
}

}  // namespace

std::string config_path(const TrainingArguments& args) {
  if (args.config_name) {
    if (fs::is_directory(*args.config_name)) {
      return (fs::path(*args.config_name) / "config.json").string();
    }
    return *args.config_name;
  }
  if (args.model_name_or_path) return (fs::path(*args.model_name_or_path) / "config.json").string();
  return "";
}

ModelSetup load_model_config(const TrainingArguments& args, const Task& task) {
  const auto& model_dir = args.model_name_or_path;
  check_usage(model_dir || args.config_name, "--model_name_or_path",
        "give a model: --model_name_or_path DIR (a Hugging Face model folder), or --config_name ",
        "tiny|mini|small|medium|base|large|PATH with --tokenizer_name DIR|vocab.txt to start "
        "from new weights");
  if (model_dir) {
    check(fs::is_directory(*model_dir), "--model_name_or_path", "no such folder: ", *model_dir);
  }
  check_usage(args.tokenizer_name || model_dir, "--tokenizer_name",
        "a model from --config_name needs --tokenizer_name (a tokenizer folder or a vocab.txt)");
  ModelSetup model;
  model.tokenizer = args.tokenizer_name ? load_tokenizer(*args.tokenizer_name, "--tokenizer_name")
                                        : load_tokenizer(*model_dir, "--model_name_or_path");
  model.config = args.config_name
                     ? config_from_name(*args.config_name, *model.tokenizer)
                     : model_config_read((fs::path(*model_dir) / "config.json").string());
  const ModelFamily& family = model_family(*model.config);
  check(model.tokenizer->vocab_size() <= family.vocab_size(*model.config), "--tokenizer_name",
        "the tokenizer has ", model.tokenizer->vocab_size(),
        " tokens but the model's vocab_size is ", family.vocab_size(*model.config));
  name_tokenizer_class(model.tokenizer, family);
  // The Trainer trains the head the architectures name.
  model.config->architectures = {family.architecture(task.head())};
  task.adapt_config(*model.config);
  return model;
}

void load_model_weights(ModelSetup& model, const Task& task, const TrainingArguments& args,
                        std::ostream& log) {
  const ModelFamily& family = model_family(*model.config);
  const std::string architecture = family.architecture(task.head());
  Graph graph;
  ParameterSet params = family.parameters(task.head(), graph, *model.config);
  if (args.model_name_or_path) {
    const std::string& dir = *args.model_name_or_path;
    LoadReport report = family.load_weights(params, dir, /*strict=*/false);
    // transformers only warns about names it did not match; none matched is no BERT at all.
    check(report.missing.size() < params.size(), (fs::path(dir) / "model.safetensors").string(),
          "none of its tensors is a parameter of ", architecture, " (unexpected: ",
          name_list(report.unexpected), ")");
    if (!report.unexpected.empty()) {
      log << "Some weights of the model checkpoint at " << dir
          << " were not used when initializing " << architecture << ": "
          << name_list(report.unexpected) << "\n- This IS expected if you are initializing "
          << architecture
          << " from the checkpoint of a model trained on another task or with another "
             "architecture.\n";
    }
    if (!report.missing.empty()) {
      log << "Some weights of " << architecture
          << " were not initialized from the model checkpoint at " << dir
          << " and are newly initialized: " << name_list(report.missing)
          << "\nYou should probably TRAIN this model on a down-stream task to be able to use it "
             "for predictions and inference.\n";
    }
  }
  params.initialize(args.seed);
  model.weights = params.state_dict();
  // Last of the model's checks, so that a broken data file or weights file is reported first.
  const int64_t positions = family.max_positions(*model.config);
  check(max_seq_length_for(args) <= positions, config_path(args), "\"max_position_embeddings\" ",
        positions, " is shorter than --max_seq_length ", max_seq_length_for(args),
        ": the model cannot take sequences that long (give --max_seq_length ", positions,
        " or less)");
}

std::unique_ptr<Trainer> make_trainer(const TrainingArguments& args, ModelSetup& model,
                                      Backend& backend) {
  return std::make_unique<Trainer>(args, *model.config, std::move(model.weights),
                                   std::move(*model.tokenizer), backend, std::cerr);
}

}  // namespace kiln::cli
