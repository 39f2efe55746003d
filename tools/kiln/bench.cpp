// `kiln bench`: synthetic BERT training steps (forward, backward, AdamW) of a task (see
// bench_task.h) timed after a warm-up, printed as ONE JSON line whose fields match
// ../shared/bench/peer/bert_torch.py's where they correspond (same configs, same FLOP formula),
// plus the fraction of this CPU's peak FLOP/s measured by the same command and the runtime's
// counters (compile time, kernels, arena); --task mlm adds the mission's job projected at the
// measured speed.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>

#include "bench.h"
#include "bench_task.h"
#include "commands.h"
#include "setup.h"
#include "kiln/backends/cpu/bf16_products.h"
#include "kiln/backends/cpu/cpu_isa.h"
#include "kiln/dist/communicator.h"
#include "kiln/ir/error.h"
#include "kiln/runtime/cpu_peak.h"
#include "kiln/runtime/disk_cache.h"
#include "kiln/runtime/heap_pages.h"
#include "kiln/train/dropout_keys.h"
#include "kiln/train/mlm_job_projection.h"
#include "kiln/train/step_memory.h"
#include "kiln/train/train_step.h"

namespace kiln::cli {
namespace {

struct BenchOptions {
  std::string task = "classification";
  std::string config = "base";
  int64_t batch = 16;
  int64_t seq = 128;
  int64_t steps = 10;
  int64_t warmup = 3;
  std::string dtype = "fp32";
  bool gradient_checkpointing = false;
  std::string device = "cpu";
  std::string pjrt_plugin;
  int64_t num_devices = 1;  // replicas per process, each with a batch of `batch` rows
  std::string compile_cache_dir = compile_cache_folder(std::nullopt);
  int threads = 0;  // 0: the backend's default (OpenMP's: OMP_NUM_THREADS, else every core)
  int64_t seed = 0;
  std::string tag;
};

// bert_torch.py's optimizer: torch.optim.AdamW(lr=2e-5) with its default weight decay 0.01 on
// every parameter.
constexpr double kLearningRate = 2e-5;
constexpr double kWeightDecay = 0.01;

void run_bench(const BenchOptions& options) {
  check(options.dtype == "fp32" || options.dtype == "bf16", "--dtype", "'", options.dtype,
        "' is not one of: fp32, bf16");
  BertConfig config = bert_config_preset(options.config);
  check(options.seq <= config.max_position_embeddings, "--seq", options.seq,
        " is longer than the model's max_position_embeddings ", config.max_position_embeddings);
  // The same device choice as kiln train (cpu, reference, pjrt:cpu, ...).
  TrainingArguments device_args;
  device_args.device = options.device;
  device_args.num_devices = options.num_devices;
  if (!options.pjrt_plugin.empty()) device_args.pjrt_plugin = options.pjrt_plugin;
  std::unique_ptr<Backend> backend = make_backend(device_args);
  if (options.threads > 0) omp_set_num_threads(options.threads);
  const int threads = omp_get_max_threads();
  // Measured first, while this process has nothing else to do.
  const CpuPeak peak = measure_cpu_peak(threads);

  Graph graph;
  BenchWorkload workload =
      bench_workload(graph, config, options.task, options.batch, options.seq, options.seed);
  TrainStepConfig step_config;
  step_config.optimizer.weight_decay = kWeightDecay;
  step_config.compile.bf16 = options.dtype == "bf16";
  step_config.compile.gradient_checkpointing = options.gradient_checkpointing;
  const auto replicas = static_cast<int>(options.num_devices);
  step_config.replicas = replicas;
  // Under mpirun every process runs `replicas` replicas of one data-parallel step.
  dist::Communicator& world = dist::world();
  step_config.processes = world.size();
  const int64_t all_replicas = options.num_devices * world.size();
  const std::vector<Value>& params = workload.params;
  Runtime runtime(*backend, {}, compile_cache_folder(options.compile_cache_dir));
  TrainStep step(graph, workload.loss, params, std::vector<bool>(params.size(), true),
                 step_config, runtime, workload.loss_count);
  TrainState state(runtime, std::move(workload.initial), replicas);
  // Each replica trains on the same synthetic batch (the time is what is measured).
  ReplicaFeeds feeds(static_cast<size_t>(replicas), workload.batch);

  // bert_torch.py's FLOPs: 6 * non-embedding parameters * tokens + attention's 12 * L * S^2 * H * B.
  int64_t params_total = 0, params_tables = 0;
  for (const auto& [name, buffers] : state.param_buffers()) {
    const int64_t count = shape_numel(buffers[0]->shape());
    params_total += count;
    for (const char* table : {"word_embeddings", "position_embeddings", "token_type_embeddings"}) {
      if (name.find(table) != std::string::npos) params_tables += count;
    }
  }
  const int64_t params_nonembedding = params_total - params_tables;
  return_free_heap_pages();
  // Planned before the first step runs (this compiles the update program).
  const StepMemory memory = step_memory(step, state);
  const auto tokens = static_cast<double>(options.batch * options.seq * all_replicas);
  const double flops =
      6.0 * static_cast<double>(params_nonembedding) * tokens +
      12.0 * static_cast<double>(config.num_hidden_layers * options.seq * options.seq *
                                 config.hidden_size * options.batch * all_replicas);

  // The one upload of the weights and AdamW state, left out of the per-step traffic.
  const int64_t uploaded_state = runtime.counters().host_to_device_bytes;
  std::vector<double> losses, times;
  auto run_step = [&](int64_t index) {
    // A new dropout mask each step, as torch's generator advances.
    for (int64_t r = 0; r < options.num_devices; ++r) {
      const int64_t replica = world.rank() * options.num_devices + r;
      feeds[static_cast<size_t>(r)]["dropout_offset"] = dropout_row_keys(
          index, options.batch * all_replicas, replica * options.batch, options.batch);
    }
    losses.push_back(step.update(state, feeds, kLearningRate).result().loss);
  };
  for (int64_t i = 0; i < options.warmup; ++i) run_step(i);
  const CpuSample before = cpu_sample();
  for (int64_t i = 0; i < options.steps; ++i) {
    const auto start = std::chrono::steady_clock::now();
    run_step(options.warmup + i);
    times.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  const CpuLoad load = cpu_load(before, cpu_sample(), options.steps);
  const dist::CommStats comm = world.stats();
  const int64_t steps_run = options.warmup + options.steps;  // the warm-up's all-reduce too
  const StepTimes time = step_times(times);
  const RuntimeCounters counters = runtime.counters();
  // bf16 products where the CPU backend multiplies in bf16, else rounded operands' fp32 products.
  const bool bf16 = options.dtype == "bf16" && cpu::cpu_has_bf16_products();
  const double peak_gflops = bf16 ? peak.bf16_gflops : peak.fp32_gflops;
  const double gflops = flops / time.median / 1e9;
  const double peak_rss = peak_rss_mib();

  nlohmann::ordered_json record = {
      {"kind", "bert_train"},
      {"framework", "kiln"},
      {"task", options.task},
      {"config", options.config},
      {"layers", config.num_hidden_layers},
      {"hidden", config.hidden_size},
      {"heads", config.num_attention_heads},
      {"intermediate", config.intermediate_size},
      {"batch", options.batch},
      {"seq", options.seq},
      {"dtype", options.dtype},
      {"device", std::string(backend->name())},
      {"devices", options.num_devices},
      {"processes", world.size()},
      {"threads", threads},
      {"steps", options.steps},
      {"warmup", options.warmup},
      {"step_s_mean", time.mean},
      {"step_s_median", time.median},
      {"step_s_min", time.min},
      {"step_s_max", time.max},
      {"step_s_stdev", time.stdev},
      {"step_ms_median", time.median * 1e3},
      {"tokens_per_s", tokens / time.median},
      {"samples_per_s", static_cast<double>(options.batch * all_replicas) / time.median},
      {"peak_rss_mib", peak_rss},
      // The measure of what is not weights, gradients and AdamW's two moments.
      {"peak_rss_minus_16b_per_param_mib",
       peak_rss - 16.0 * static_cast<double>(params_total) / (1024.0 * 1024.0)},
      {"planned_peak_bytes", memory.peak_bytes()},
      {"planned_fixed_bytes", memory.fixed_bytes()},
      {"planned_activation_bytes", memory.activation_bytes()},
      {"gradient_checkpointing", options.gradient_checkpointing},
      {"params", params_total},
      {"params_nonembedding", params_nonembedding},
      {"flops_per_step", flops},
      {"gflops_achieved", gflops},
      {"model_flops_per_s", gflops * 1e9},
      {"peak_gflops", peak_gflops},
      {"peak_kernel", bf16 ? peak.bf16_kernel : peak.fp32_kernel},
      {"peak_fraction", peak_gflops > 0 ? nlohmann::ordered_json(gflops / peak_gflops) : nullptr},
      {"peak_fp32_gflops", peak.fp32_gflops},
      {"peak_bf16_gflops", peak.bf16_gflops},
      {"bf16_products_native", bf16},
      {"measured_clock_ghz", peak.clock_ghz},
      {"cpu_model", peak.cpu_model},
      {"cpu_isa", std::string(cpu::cpu_isa_name(cpu::effective_cpu_isa()))},
      {"cpu_busy_pct", load.busy_pct},
      {"proc_cpu_pct", load.proc_pct},
      {"proc_sys_s_per_step", load.sys_s_per_step},
      {"cpu_steal_pct", load.steal_pct},
      {"loss_first", losses.front()},
      {"loss_last", losses.back()},
      {"compile_ms", counters.compile_ms},
      {"compiles", counters.compiles},
      {"cache_hits", counters.cache_hits},
      {"disk_cache_hits", counters.disk_cache_hits},
      {"kernels", counters.kernels},
      {"compiled_loops", counters.compiled_loops},
      {"arena_bytes", counters.arena_bytes},
      {"host_to_device_bytes_per_step",
       (counters.host_to_device_bytes - uploaded_state) / std::max<int64_t>(1, counters.runs)},
      {"device_to_host_bytes_per_step",
       counters.device_to_host_bytes / std::max<int64_t>(1, counters.runs)},
      {"all_reduce_bytes_per_step", comm.all_reduce_bytes / steps_run},
      {"all_reduce_wait_ms_per_step", comm.wait_seconds * 1e3 / static_cast<double>(steps_run)},
      {"compile_options", step_config.compile.key()},
      {"malloc", malloc_name()},
      {"optimizer", "AdamW(lr=2e-5, wd=0.01) in the compiled step"},
      {"tag", options.tag},
  };
  if (options.task == "mlm") {
    const MlmJobProjection job = project_mlm_job(flops / tokens, gflops * 1e9);
    record["masked_tokens"] = workload.masked_tokens;
    record["mlm_predictions"] = workload.mlm_predictions;
    record["projected_mlm_job_flops"] = job.flops;
    record["projected_mlm_job_days"] = job.days;
    record["projected"] = mlm_job_projection_text(job) + " on this machine";
  }
  if (dist::is_main_process()) std::cout << record.dump() << std::endl;
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto options = std::make_shared<BenchOptions>();
  CLI::App* bench = app.add_subcommand(
      "bench", "Time synthetic BERT training steps; print one JSON line (as bert_torch.py)");
  bench->add_option("--task", options->task,
                    "classification (bert_torch.py's step) or mlm (run_mlm.py's BertForMaskedLM "
                    "step on a batch with 15% of its tokens masked; prints the time 3 epochs of "
                    "WikiText-103 would take at this speed: the mission's job with --config large "
                    "--seq 512)")
      ->check(CLI::IsMember({"classification", "mlm"}))
      ->capture_default_str();
  bench->add_option("--config", options->config, "model size")
      ->check(CLI::IsMember({"tiny", "mini", "small", "medium", "base", "large"}))
      ->capture_default_str();
  bench->add_option("--batch", options->batch, "sequences per step")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  bench->add_option("--seq", options->seq, "tokens per sequence")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  bench->add_option("--steps", options->steps, "timed steps")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  bench->add_option("--warmup", options->warmup, "untimed steps first (the first one compiles)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  bench->add_option("--dtype", options->dtype, "fp32, or bf16 mixed precision")
      ->check(CLI::IsMember({"fp32", "bf16"}))
      ->capture_default_str();
  bench->add_flag("--gradient_checkpointing", options->gradient_checkpointing,
                  "recompute each layer's activations in the backward pass instead of keeping "
                  "them");
  bench->add_option("--device", options->device,
                    "cpu, reference, pjrt:cpu, pjrt:cuda, pjrt:tpu or tpu (as kiln train)")
      ->capture_default_str();
  bench->add_option("--num_devices", options->num_devices,
                    "data parallel replicas, each on --batch rows (global batch: batch x devices "
                    "x the processes mpirun started)")
      ->check(CLI::PositiveNumber);
  bench->add_option("--pjrt_plugin", options->pjrt_plugin,
                    "the PJRT plugin library for --device pjrt:* (default: discovered)");
  bench->add_option("--compile_cache_dir", options->compile_cache_dir,
                    "compiled XLA programs kept between runs, as kiln train ('' or none: off); "
                    "after a disk_cache_hit, compile_ms is the time it took to load")
      ->capture_default_str();
  bench->add_option("--threads", options->threads,
                    "threads for the kernels and the peak probe (0: OMP_NUM_THREADS, else every "
                    "core)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  bench->add_option("--seed", options->seed, "seed of the weights, batch and dropout")
      ->capture_default_str();
  bench->add_option("--tag", options->tag, "free text copied into the JSON line");
  bench->footer(
      "Examples: kiln bench --config base --batch 16 --seq 128 --dtype bf16\n"
      "          kiln bench --task mlm --config large --batch 4 --seq 512 --dtype bf16");
  bench->callback([options] { run_bench(*options); });
}

}  // namespace kiln::cli
