#include "kiln/backends/cpu/kernel_profile.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <numeric>

namespace kiln::cpu {
namespace {

std::string_view kind_name(KernelKind kind) {
  switch (kind) {
    case KernelKind::single: return "single";
    case KernelKind::loop: return "loop";
    case KernelKind::gemm: return "gemm";
  }
  return "?";
}

}  // namespace

std::string describe_kernel(const Graph& graph, const KernelGroup& group) {
  std::string text(kind_name(group.kind));
  text += ' ';
  std::string_view previous;
  for (size_t i = 0; i < group.nodes.size(); ++i) {
    std::string_view name = op_name(graph.node(group.nodes[i]).op);
    if (name == previous) continue;  // "add,add,add" reads as "add"
    if (i) text += ',';
    text += name;
    previous = name;
  }
  const Node& last = graph.node(group.nodes.back());
  text += " -> ";
  text += dtype_name(last.dtype);
  text += shape_str(last.shape);
  return text;
}

KernelProfile::KernelProfile(const Program& program) : program_(program) {
  if (const char* value = std::getenv("KILN_CPU_PROFILE")) top_ = std::max(0, std::atoi(value));
  if (enabled()) nanoseconds_.assign(program.kernels.size(), 0);
}

void KernelProfile::finish_run() {
  if (runs_++ == 0) {  // the first run's times aside; the later runs' are summed from zero
    first_run_.assign(nanoseconds_.size(), 0);
    first_run_.swap(nanoseconds_);
  }
}

KernelProfile::~KernelProfile() {
  if (!enabled() || runs_ == 0) return;
  const bool steady = runs_ > 1;
  if (!steady) nanoseconds_.swap(first_run_);
  std::vector<size_t> order(nanoseconds_.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return nanoseconds_[a] > nanoseconds_[b]; });
  const double total = static_cast<double>(
      std::accumulate(nanoseconds_.begin(), nanoseconds_.end(), int64_t{0}));
  const int64_t counted = steady ? runs_ - 1 : 1;
  const double runs = static_cast<double>(counted);
  std::fprintf(stderr, "kernel profile: %zu kernels, %.3f ms per run over %lld %s\n", order.size(),
               total / runs / 1e6, static_cast<long long>(counted),
               steady ? "runs after the first" : "run (the only one: page faults included)");
  const size_t shown = std::min(order.size(), static_cast<size_t>(top_));
  for (size_t rank = 0; rank < shown; ++rank) {
    size_t k = order[rank];
    const double spent = static_cast<double>(nanoseconds_[k]);
    std::fprintf(stderr, "  %5.1f%% %8.3f ms  #%-4zu %s\n", total > 0 ? 100.0 * spent / total : 0.0,
                 spent / runs / 1e6, k,
                 describe_kernel(*program_.module.graph, program_.kernels[k]).c_str());
  }
}

}  // namespace kiln::cpu
