// Usage errors: unknown commands and flags (with hints for transformers' flags), bad values.
#include "usage_errors.h"

#include <array>
#include <iostream>
#include <utility>
#include <vector>

namespace kiln::cli {
namespace {

constexpr std::string_view kBf16 = "Kiln has no fp16 mixed precision; use --bf16";
constexpr std::string_view kDataParallel =
    "Kiln does not shard models (no DeepSpeed or FSDP); it trains data parallel: --num_devices N "
    "replicas over the devices of a PJRT plugin, or `mpirun -np N kiln train ...` across "
    "processes and machines";
constexpr std::string_view kHub =
    "Kiln does not upload to the Hub; --output_dir is a transformers model folder, which "
    "`huggingface-cli upload REPO OUTPUT_DIR` publishes";
constexpr std::string_view kDevice = "choose the device with --device (see `kiln devices`)";

constexpr std::array<std::pair<std::string_view, std::string_view>, 17> kHints = {{
    {"fp16", kBf16},
    {"fp16_full_eval", kBf16},
    {"fp16_opt_level", kBf16},
    {"half_precision_backend", kBf16},
    {"bf16_full_eval", "--bf16 evaluates in bf16 too"},
    {"deepspeed", kDataParallel},
    {"fsdp", kDataParallel},
    {"fsdp_config", kDataParallel},
    {"local_rank", "`mpirun -np N kiln train ...` gives each process its rank"},
    {"push_to_hub", kHub},
    {"hub_model_id", kHub},
    {"hub_token", kHub},
    {"hub_strategy", kHub},
    {"torch_compile", "Kiln always compiles the training step"},
    {"use_cpu", kDevice},
    {"no_cuda", kDevice},
    {"tf32", "Kiln's fp32 matrix multiplies are full fp32; --bf16 trades precision for speed"},
}};

// The words `app` and its chosen command did not take.
std::vector<std::string> unexpected_words(const CLI::App& app) {
  std::vector<std::string> words = app.remaining();
  for (const CLI::App* command : app.get_subcommands()) {
    std::vector<std::string> more = command->remaining();
    words.insert(words.end(), more.begin(), more.end());
  }
  return words;
}

std::string command_names(const CLI::App& app) {
  std::string names;
  for (const CLI::App* command : app.get_subcommands([](const CLI::App*) { return true; })) {
    names += (names.empty() ? "" : ", ") + command->get_name();
  }
  return names;
}

// "kiln train --help", or "kiln --help" before a command was named.
std::string help_command(const CLI::App& app) {
  std::vector<CLI::App*> chosen = app.get_subcommands();
  return chosen.empty() ? "kiln --help" : "kiln " + chosen.front()->get_name() + " --help";
}

// The message of a missing or unknown command or of unknown flags; empty when none of these is
// the error.
std::string unexpected_words_message(const CLI::App& app) {
  std::vector<std::string> words = unexpected_words(app);
  if (app.get_subcommands().empty() && (words.empty() || !words.front().starts_with('-'))) {
    return (words.empty() ? "a command is required" : "unknown command '" + words.front() + "'") +
           "; the commands are: " + command_names(app);
  }
  std::vector<std::string> lines;
  std::string unknown;
  for (const std::string& word : words) {
    if (std::optional<std::string> hint = transformers_flag_hint(word)) {
      lines.push_back(word.substr(0, word.find('=')) + " (a transformers flag): " + *hint);
    } else {
      unknown += (unknown.empty() ? "" : " ") + word;
    }
  }
  if (!unknown.empty()) lines.push_back("unrecognized arguments: " + unknown);
  std::string message;
  for (const std::string& line : lines) {
    message += (message.empty() ? "" : "\nkiln: error: ") + line;
  }
  return message;
}

}  // namespace

std::optional<std::string> transformers_flag_hint(std::string_view flag) {
  if (!flag.starts_with("--")) return std::nullopt;
  flag.remove_prefix(2);
  flag = flag.substr(0, flag.find('='));
  for (const auto& [name, hint] : kHints) {
    if (name == flag) return std::string(hint);
  }
  return std::nullopt;
}

void print_error(std::string_view message) { std::cerr << "kiln: error: " << message << '\n'; }

int report_parse_error(const CLI::App& app, const CLI::ParseError& error) {
  if (error.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) {
    return app.exit(error);  // --help, --help-all, --version
  }
  std::string message = unexpected_words_message(app);
  return report_usage_error(app, message.empty() ? std::string(error.what()) : message);
}

int report_usage_error(const CLI::App& app, std::string_view message) {
  print_error(message);
  std::cerr << "Run `" << help_command(app) << "` for the flags and their values.\n";
  return kExitUsage;
}

}  // namespace kiln::cli
