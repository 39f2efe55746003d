// The runtime: compiles programs through a backend with a cache keyed by what makes programs
// interchangeable (graph fingerprint, input shapes and dtypes, backend, compiler switches,
// donations), in memory and, for backends that serialize, on disk; counts what compiling and
// running cost, and explains every compile in a log line.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/backends/backend.h"
#include "kiln/runtime/counters.h"
#include "kiln/runtime/disk_cache.h"
#include "kiln/runtime/program_key.h"

namespace kiln {

class Runtime {
 public:
  using Log = std::function<void(const std::string&)>;

  // `backend` must outlive the runtime. `log` (optional) receives one line per compile.
  // `cache_folder` (optional) keeps compiled programs between processes when the backend
  // serializes them (Backend::serializes()); see compile().
  explicit Runtime(Backend& backend, Log log = {}, std::string cache_folder = {});
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // The program computing `outputs` of `graph`: an earlier one with an equal ProgramKey (a cache
  // hit), else a new compile. `family` names the kind of program in the log ("training step"):
  // the first compile of a family lists its data inputs ("compiling the training step for
  // input_ids i64(8,16), ..."); a later one says what sets it apart from the closest earlier
  // program of the family ("compiling the training step again: input_ids changed from i64(8,16)
  // to i64(8,32)"). With a cache folder, a program not in memory is loaded from the folder when
  // it is there ("loaded the training step from the compile cache ..."; a disk cache hit), else
  // compiled and stored (a miss; an unusable entry is a miss that is logged and overwritten).
  // The executable lives as long as the runtime; its runs are counted.
  Executable& compile(const Graph& graph, const std::vector<Value>& outputs,
                      const CompileSpec& spec, std::string_view family);

  // `tensor` on device `device` of the backend, counted as a host-to-device copy.
  BufferPtr upload(const Tensor& tensor, int device = 0);
  // A host copy of `buffer`, counted as a device-to-host copy.
  Tensor to_host(const Buffer& buffer);

  RuntimeCounters counters() const;
  // While a compile runs longer than this, a line "still compiling the <family> (N s so far)" is
  // logged every `seconds` (default 30, the longest silence of a plain log between steps).
  void set_heartbeat_interval(double seconds) { heartbeat_seconds_ = seconds; }
  // For one-off programs that should neither be cached nor counted (diagnostics).
  Backend& backend() const { return backend_; }

 private:
  class CountedExecutable;
  struct Entry;
  // What sets a new program `key` of `family` apart, for its log line: " for input_ids
  // i64(8,16), ..." (the family's first) or " again: input_ids changed from ...".
  std::string compile_reason(const ProgramKey& key, std::string_view family) const;
  // backend_.compile, with heartbeat lines in the log while it runs.
  std::unique_ptr<Executable> compile_with_heartbeat(const Graph& graph,
                                                     const std::vector<Value>& outputs,
                                                     const CompileSpec& spec,
                                                     std::string_view family);
  // The program from the disk cache, or null (a miss, logged when the entry was unusable).
  std::unique_ptr<Executable> load(const ProgramKey& key, const Graph& graph,
                                   const std::vector<Value>& outputs, const CompileSpec& spec,
                                   std::string_view family);
  // Stores a new program in the disk cache; a failure is logged, not thrown.
  void store(const ProgramKey& key, const Executable& executable, std::string_view family);

  Backend& backend_;
  Log log_;
  double heartbeat_seconds_ = 30.0;
  std::unique_ptr<DiskCache> disk_;  // null: no cache folder, or a backend that cannot serialize
  std::vector<std::unique_ptr<Entry>> entries_;
  RuntimeCounters counters_;  // arena_bytes and kernels are summed over entries_ on demand
};

}  // namespace kiln
