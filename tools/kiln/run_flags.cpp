// The flags of the run commands, their checks, and the choice of backend.
#include <omp.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "kiln/backends/cpu/cpu_backend.h"
#include "kiln/backends/pjrt/pjrt_backend.h"
#include "kiln/backends/reference/reference_backend.h"
#include "kiln/dist/communicator.h"
#include "kiln/io/hf_hub_cache.h"
#include "kiln/ir/error.h"
#include "kiln/ir/usage_error.h"
#include "kiln/tasks/registry.h"
#include "kiln/train/training_arguments_cli.h"
#include "setup.h"

namespace kiln::cli {

namespace fs = std::filesystem;

void add_run_flags(CLI::App& command, RunOptions& options,
                   std::span<const std::string_view> listed) {
  training_arguments_add_flags(command, options.args, listed);
  command
      .add_flag("--no_header", options.no_header,
                "CSV/TSV files have no header line (name the columns with --column_names; "
                "else they are 0, 1, ...).")
      ->group("Model and data")
      ->default_str("False");
  command
      .add_option("--column_names", options.column_names,
                  "Names for the columns of CSV/TSV files, in order (e.g. label,source,text).")
      ->group("Model and data")
      ->delimiter(',')
      ->default_str("None");
}

void finish_arguments(TrainingArguments& args, bool task_of_the_model) {
  // A Hub id ("org/name") that is no local folder names its snapshot in the Hugging Face cache,
  // as from_pretrained finds it offline.
  for (auto [flag, name] : {std::pair{"--model_name_or_path", &args.model_name_or_path},
                            std::pair{"--tokenizer_name", &args.tokenizer_name}}) {
    if (*name && !fs::exists(**name) && looks_like_hub_id(**name)) {
      *name = resolve_model_folder(**name, flag);
    }
  }
  // First: post-init's checks read --task. Training defaults to classification, as a
  // pretrained checkpoint's architectures (BertForMaskedLM) name the task it was trained for,
  // not the one it is fine-tuned for.
  const bool read_from_model = task_of_the_model && !args.task;
  args.task =
      read_from_model ? task_of_model(config_path(args)) : args.task.value_or("classification");
  // Every check of post-init is about the arguments alone: a usage error.
  try {
    training_arguments_post_init(args);
  } catch (const UsageError&) {
    throw;
  } catch (const Error& error) {
    throw UsageError(error.what());
  }
  if (read_from_model && fs::is_regular_file(config_path(args)) && dist::is_main_process()) {
    std::cerr << "--task " << *args.task << " (the model's, from " << config_path(args) << ")\n";
  }
}

std::unique_ptr<Backend> make_backend(const TrainingArguments& args) {
  // The processes mpirun starts on one machine share its cores (OMP_NUM_THREADS overrides).
  if (dist::world().size() > 1 && std::getenv("OMP_NUM_THREADS") == nullptr) {
    omp_set_num_threads(dist::threads_per_process(omp_get_num_procs()));
  }
  pjrt::DiscoverySources sources = pjrt::discovery_sources(args.pjrt_plugin.value_or(""));
  if (args.device == "auto") {
    std::unique_ptr<Backend> accelerator = make_accelerator_backend(sources);
    return accelerator ? std::move(accelerator) : make_cpu_backend();
  }
  if (args.device == "cpu") return make_cpu_backend();
  if (args.device == "reference") return make_reference_backend();
  if (args.device == "tpu" || args.device == "pjrt:tpu") {
    return make_pjrt_backend_for(pjrt::PluginKind::tpu, sources);
  }
  if (args.device == "pjrt:cuda") return make_pjrt_backend_for(pjrt::PluginKind::cuda, sources);
  check(args.device == "pjrt:cpu", "--device", "unknown device '", args.device,
        "'; the devices are: auto, cpu, reference, pjrt:cpu, pjrt:cuda, pjrt:tpu, tpu");
  return make_pjrt_backend_for(pjrt::PluginKind::cpu, sources, args.num_devices);
}

}  // namespace kiln::cli
