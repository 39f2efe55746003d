// `kiln generate`: the continuation of a prompt by a GPT-2 causal LM (a folder with config.json,
// model.safetensors and tokenizer.json, or a Hub id in the Hugging Face cache), as transformers'
// generate() writes it, with its arguments' names: greedy by default, or sampled (--do_sample)
// after --temperature, --top_k and --top_p, drawn from --seed. The prompt is encoded once, then
// each new token costs one position (the key/value cache).
#include <filesystem>
#include <iostream>

#include "commands.h"
#include "kiln/io/hf_hub_cache.h"
#include "kiln/io/tokenizer_files.h"
#include "kiln/ir/error.h"
#include "kiln/ir/usage_error.h"
#include "kiln/models/gpt2_generate.h"
#include "kiln/models/gpt2_heads.h"
#include "kiln/models/gpt2_pretrained.h"
#include "setup.h"

namespace kiln::cli {
namespace {

namespace fs = std::filesystem;

struct GenerateFlags {
  std::string model;
  std::string prompt;
  std::string device = "cpu";
  Gpt2GenerateOptions options;
};

void run_generate(const GenerateFlags& flags) {
  try {  // the sampling flags alone: a usage error (exit 2) before anything loads
    sampling_options_check(flags.options.sampling);
  } catch (const Error& error) {
    throw UsageError(error.what());
  }
  check_usage(flags.options.max_new_tokens >= 0, "--max_new_tokens", "must not be negative, got ",
              flags.options.max_new_tokens);
  const std::string folder = resolve_model_folder(flags.model, "--model_name_or_path");
  const std::string config_path = (fs::path(folder) / "config.json").string();
  check(fs::exists(config_path), "--model_name_or_path", "'", folder,
        "' has no config.json: give the folder of a GPT-2 model (save_pretrained's)");
  Gpt2Config config = gpt2_config_read(config_path);
  Tokenizer tokenizer = tokenizer_load(folder);
  Encoding prompt = tokenizer.encode(flags.prompt);

  Graph graph;
  BertBuildOptions build;
  build.seq_len = 1;  // the graph only holds the parameters; generation builds its own
  build.with_labels = false;
  Gpt2CausalLM lm = gpt2_lm_head_model(graph, config, build);
  gpt2_load_weights(lm.params, folder);

  TrainingArguments device;
  device.device = flags.device;
  std::unique_ptr<Backend> backend = make_backend(device);
  Gpt2GenerateOptions options = flags.options;
  options.eos_token_id = config.eos_token_id;
  std::vector<int64_t> generated = gpt2_generate(
      *backend, config, lm.params, std::vector<int64_t>(prompt.ids.begin(), prompt.ids.end()),
      options);
  std::cout << tokenizer.decode(std::vector<int32_t>(generated.begin(), generated.end())) << "\n";
}

}  // namespace

void add_generate_command(CLI::App& app) {
  auto* command =
      app.add_subcommand("generate", "Continue a prompt with a GPT-2 causal language model");
  auto flags = std::make_shared<GenerateFlags>();
  command->add_option("--model_name_or_path", flags->model,
                      "The model: a folder with config.json, model.safetensors and "
                      "tokenizer.json, or a Hub id (org/name) in the Hugging Face cache")
      ->required();
  command->add_option("--prompt", flags->prompt, "The text to continue")->required();
  SamplingOptions& sampling = flags->options.sampling;
  command->add_option("--max_new_tokens", flags->options.max_new_tokens,
                      "How many tokens to generate at most (fewer when it generates eos)")
      ->capture_default_str();
  command->add_flag("--do_sample", sampling.do_sample,
                    "Sample the next token (default: greedy, the most probable one)");
  command->add_option("--temperature", sampling.temperature,
                      "With --do_sample: divides the logits")
      ->capture_default_str();
  command->add_option("--top_k", sampling.top_k,
                      "With --do_sample: draw among the k most probable tokens (0: all)")
      ->capture_default_str();
  command->add_option("--top_p", sampling.top_p,
                      "With --do_sample: draw among the most probable tokens whose probability "
                      "adds up to top_p")
      ->capture_default_str();
  command->add_option("--seed", flags->options.seed, "The seed of the draws of --do_sample")
      ->capture_default_str();
  command->add_option("--device", flags->device, "cpu, reference, auto or pjrt:...")
      ->capture_default_str();
  command->footer(
      "Example: kiln generate --model_name_or_path out/clm --prompt 'It is a truth' "
      "--max_new_tokens 40");
  command->callback([flags] { run_generate(*flags); });
}

}  // namespace kiln::cli
