// The program cache (in memory, then on disk), the counters and the compile log lines.
#include "kiln/runtime/runtime.h"

#include <chrono>
#include <cmath>
#include <exception>
#include <limits>
#include <optional>

#include "kiln/runtime/heartbeat.h"

namespace kiln {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

int64_t total_bytes(const std::vector<Tensor>& tensors) {
  int64_t bytes = 0;
  for (const Tensor& tensor : tensors) bytes += static_cast<int64_t>(tensor.nbytes());
  return bytes;
}

}  // namespace

// Runs the backend's executable, adding its time, and on a device the bytes of host tensors it
// took and returned, to the runtime's counters.
class Runtime::CountedExecutable final : public Executable {
 public:
  CountedExecutable(std::unique_ptr<Executable> inner, RuntimeCounters& counters,
                    bool host_memory)
      : inner_(std::move(inner)), counters_(counters), host_memory_(host_memory) {}

  std::vector<Tensor> run(const std::vector<Tensor>& arguments) override {
    // Counted before the run: donated arguments may be taken over by it.
    int64_t bytes = total_bytes(arguments);
    Clock::time_point start = Clock::now();
    std::vector<Tensor> results = inner_->run(arguments);
    counters_.execute_ms += ms_since(start);
    if (!host_memory_) {
      counters_.host_to_device_bytes += bytes;
      counters_.device_to_host_bytes += total_bytes(results);
    }
    ++counters_.runs;
    return results;
  }
  BufferLists run(const BufferLists& arguments) override {
    Clock::time_point start = Clock::now();
    BufferLists results = inner_->run(arguments);
    counters_.execute_ms += ms_since(start);
    ++counters_.runs;
    return results;
  }
  ExecutableStats stats() const override { return inner_->stats(); }

 private:
  std::unique_ptr<Executable> inner_;
  RuntimeCounters& counters_;
  bool host_memory_;
};

struct Runtime::Entry {
  ProgramKey key;
  std::string family;
  std::unique_ptr<CountedExecutable> executable;
};

Runtime::Runtime(Backend& backend, Log log, std::string cache_folder)
    : backend_(backend), log_(std::move(log)) {
  if (!cache_folder.empty() && backend_.serializes()) {
    disk_ = std::make_unique<DiskCache>(std::move(cache_folder), backend_.cache_identity());
  }
}

Runtime::~Runtime() = default;

Executable& Runtime::compile(const Graph& graph, const std::vector<Value>& outputs,
                             const CompileSpec& spec, std::string_view family) {
  ProgramKey key = program_key(graph, outputs, spec, backend_.name());
  for (const auto& entry : entries_) {
    if (entry->key == key) {
      ++counters_.cache_hits;
      return *entry->executable;
    }
  }
  const std::string reason = compile_reason(key, family);
  Clock::time_point start = Clock::now();
  std::unique_ptr<Executable> compiled;
  if (disk_) compiled = load(key, graph, outputs, spec, family);
  if (compiled != nullptr) {
    if (log_) log_("loaded the " + std::string(family) + " from the compile cache" + reason);
  } else {
    if (log_) log_("compiling the " + std::string(family) + reason);
    compiled = compile_with_heartbeat(graph, outputs, spec, family);
    ++counters_.compiles;
    if (disk_) store(key, *compiled, family);
  }
  counters_.compile_ms += ms_since(start);
  auto entry = std::make_unique<Entry>(Entry{
      std::move(key), std::string(family),
      std::make_unique<CountedExecutable>(std::move(compiled), counters_, backend_.host_memory())});
  return *entries_.emplace_back(std::move(entry))->executable;
}

std::unique_ptr<Executable> Runtime::compile_with_heartbeat(const Graph& graph,
                                                            const std::vector<Value>& outputs,
                                                            const CompileSpec& spec,
                                                            std::string_view family) {
  if (!log_) return backend_.compile(graph, outputs, spec);
  Heartbeat heartbeat(heartbeat_seconds_, [this, family](double seconds) {
    const std::string so_far = std::to_string(std::lround(seconds)) + " s so far";
    log_("still compiling the " + std::string(family) + " (" + so_far + ")");
  });
  return backend_.compile(graph, outputs, spec);
}

std::unique_ptr<Executable> Runtime::load(const ProgramKey& key, const Graph& graph,
                                          const std::vector<Value>& outputs,
                                          const CompileSpec& spec, std::string_view family) {
  try {
    std::optional<std::string> bytes = disk_->load(key);
    if (bytes) {
      std::unique_ptr<Executable> loaded = backend_.deserialize(*bytes, graph, outputs, spec);
      ++counters_.disk_cache_hits;
      return loaded;
    }
  } catch (const std::exception& error) {
    // Whatever is wrong with an entry (truncated, corrupt, another plugin build), compiling is
    // the answer; the new program then replaces the entry.
    if (log_) log_("the compile cache has no usable " + std::string(family) + ": " + error.what());
  }
  ++counters_.disk_cache_misses;
  return nullptr;
}

void Runtime::store(const ProgramKey& key, const Executable& executable, std::string_view family) {
  try {
    std::optional<std::string> bytes = backend_.serialize(executable);
    if (bytes) disk_->store(key, *bytes);
  } catch (const std::exception& error) {
    if (log_) {
      log_("the compile cache could not keep the " + std::string(family) + ": " + error.what());
    }
  }
}

std::string Runtime::compile_reason(const ProgramKey& key, std::string_view family) const {
  const Entry* closest = nullptr;
  int64_t best = std::numeric_limits<int64_t>::max();
  for (const auto& entry : entries_) {
    if (entry->family != family) continue;
    int64_t distance = key_distance(entry->key, key);
    if (distance < best) {
      best = distance;
      closest = entry.get();
    }
  }
  if (closest != nullptr) return " again: " + key_difference(closest->key, key);
  std::string inputs;
  for (const InputSignature& input : key.inputs) {
    if (input.role != InputRole::data || input.shape.empty()) continue;
    inputs += (inputs.empty() ? " for " : ", ") + input.name + " " + input.text();
  }
  return inputs;
}

BufferPtr Runtime::upload(const Tensor& tensor, int device) {
  if (!backend_.host_memory()) counters_.host_to_device_bytes += static_cast<int64_t>(tensor.nbytes());
  return backend_.upload(tensor, device);
}

Tensor Runtime::to_host(const Buffer& buffer) {
  if (!backend_.host_memory()) counters_.device_to_host_bytes += buffer.nbytes();
  return buffer.to_host();
}

RuntimeCounters Runtime::counters() const {
  RuntimeCounters counters = counters_;
  for (const auto& entry : entries_) {
    ExecutableStats stats = entry->executable->stats();
    counters.arena_bytes += stats.arena_bytes;
    counters.kernels += stats.kernels;
    counters.compiled_loops += stats.compiled_loops;
  }
  return counters;
}

}  // namespace kiln
