// Internal: where a CPU executable's step time goes, for tuning. With KILN_CPU_PROFILE=N in the
// environment every executable times each of its kernels and, when it is destroyed, prints the N
// costliest to stderr (share of the step, ms per run, what the kernel computes). The first run is
// left out when there are others: it pays the arena's page faults (on huge pages, with compaction:
// seconds for BERT-base), which steady-state steps do not. Off, it costs one branch per run.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/compiler/program.h"

namespace kiln::cpu {

class KernelProfile {
 public:
  // Reads KILN_CPU_PROFILE; enabled() is false without it.
  explicit KernelProfile(const Program& program);
  ~KernelProfile();
  KernelProfile(const KernelProfile&) = delete;
  KernelProfile& operator=(const KernelProfile&) = delete;

  bool enabled() const { return top_ > 0; }
  void add(size_t kernel, std::chrono::steady_clock::duration spent) {
    nanoseconds_[kernel] += std::chrono::duration_cast<std::chrono::nanoseconds>(spent).count();
  }
  void finish_run();

 private:
  const Program& program_;
  int top_ = 0;
  int64_t runs_ = 0;
  std::vector<int64_t> nanoseconds_;  // the runs after the first
  std::vector<int64_t> first_run_;
};

// "loop add,mul,reduce_sum -> f32(16,128)": the group's kind, ops and last result.
std::string describe_kernel(const Graph& graph, const KernelGroup& group);

}  // namespace kiln::cpu
