// Kernel order and in-place safety. A donated argument may be overwritten by the kernel that
// writes its output only once every other kernel reading the argument has run, or when that
// kernel itself reads it element by element as it writes (a loop kernel reading it directly, not
// through a broadcast). Kernels are ordered so that this holds where the data flow allows;
// donations it cannot make safe are dropped (the output then gets a fresh buffer).
// Collectives keep their order in the graph: every replica must meet them in the same order.
#include <algorithm>
#include <functional>
#include <queue>

#include "kiln/compiler/buffer_plan.h"
#include "kiln/compiler/passes.h"
#include "kiln/compiler/views.h"
#include "kiln/ir/op_registry.h"

namespace kiln {
namespace {

// Whether group k's nodes compute `id` themselves (broadcasts in a group are read in place, so
// not computed, unless a single group computes just that broadcast).
bool computes(const Graph& graph, const KernelGroup& group, int32_t id) {
  if (graph.node(id).op == OpKind::broadcast && group.nodes.back() != id) return false;
  return std::find(group.nodes.begin(), group.nodes.end(), id) != group.nodes.end();
}

}  // namespace

std::vector<Donation> schedule_kernels(const Module& module, std::vector<KernelGroup>& kernels,
                                       const std::vector<Donation>& donations) {
  const Graph& graph = *module.graph;
  auto count = kernels.size();
  // Who writes each root, and what each kernel reads (roots of operands it does not compute).
  std::vector<int32_t> writer(static_cast<size_t>(graph.size()), -1);
  for (size_t k = 0; k < count; ++k) {
    for (int32_t id : written_nodes(kernels[k])) {
      writer[static_cast<size_t>(id)] = static_cast<int32_t>(k);
    }
  }
  std::vector<std::vector<int32_t>> reads(count);
  for (size_t k = 0; k < count; ++k) {
    for (int32_t id : kernels[k].nodes) {
      for (int32_t operand : graph.node(id).inputs) {
        int32_t source = view_root(graph, operand);
        if (!computes(graph, kernels[k], source)) reads[k].push_back(source);
      }
    }
  }
  std::vector<std::vector<int32_t>> successors(count);
  for (size_t k = 0; k < count; ++k) {
    for (int32_t source : reads[k]) {
      int32_t w = writer[static_cast<size_t>(source)];
      if (w >= 0 && w != static_cast<int32_t>(k)) {
        successors[static_cast<size_t>(w)].push_back(static_cast<int32_t>(k));
      }
    }
  }
  // Each collective's kernel before the next one's, in node order (data flow between two
  // collectives runs in node order too, so the chain adds no cycle).
  std::vector<std::pair<int32_t, int32_t>> collectives;  // (node, kernel)
  for (size_t k = 0; k < count; ++k) {
    for (int32_t id : kernels[k].nodes) {
      if (op_info(graph.node(id).op).category == OpCategory::collective) {
        collectives.emplace_back(id, static_cast<int32_t>(k));
      }
    }
  }
  std::sort(collectives.begin(), collectives.end());
  for (size_t i = 1; i < collectives.size(); ++i) {
    int32_t before = collectives[i - 1].second, after = collectives[i].second;
    if (before != after) successors[static_cast<size_t>(before)].push_back(after);
  }
  auto reaches = [&](int32_t from, const std::vector<int32_t>& targets) {
    std::vector<bool> seen(count, false);
    std::vector<int32_t> stack{from};
    while (!stack.empty()) {
      int32_t k = stack.back();
      stack.pop_back();
      if (seen[static_cast<size_t>(k)]) continue;
      seen[static_cast<size_t>(k)] = true;
      if (k != from && std::find(targets.begin(), targets.end(), k) != targets.end()) return true;
      for (int32_t next : successors[static_cast<size_t>(k)]) stack.push_back(next);
    }
    return false;
  };
  std::vector<bool> output_root(static_cast<size_t>(graph.size()), false);
  for (int32_t id : module.outputs) output_root[static_cast<size_t>(view_root(graph, id))] = true;

  std::vector<Donation> kept;
  for (const Donation& donation : donations) {
    int32_t input = graph.inputs()[static_cast<size_t>(donation.input)];
    int32_t root = view_root(graph, module.outputs[static_cast<size_t>(donation.output)]);
    int32_t k = writer[static_cast<size_t>(root)];
    // Not an output that is part of its root's bytes (the plan copies it out instead).
    bool part = !covers_root(graph, module.outputs[static_cast<size_t>(donation.output)]);
    if (k < 0 || part || output_root[static_cast<size_t>(input)]) continue;
    // The writer may read the argument only element by element, directly.
    const KernelGroup& group = kernels[static_cast<size_t>(k)];
    bool safe_inside = true;
    for (int32_t id : group.nodes) {
      const Node& node = graph.node(id);
      for (int32_t operand : node.inputs) {
        if (view_root(graph, operand) != input) continue;
        safe_inside = safe_inside && group.kind == KernelKind::loop &&
                      node.op != OpKind::broadcast &&
                      covers_root(graph, operand) &&
                      shape_numel(graph.node(operand).shape) == shape_numel(node.shape);
      }
    }
    std::vector<int32_t> readers;
    for (size_t r = 0; r < count; ++r) {
      if (static_cast<int32_t>(r) != k &&
          std::find(reads[r].begin(), reads[r].end(), input) != reads[r].end()) {
        readers.push_back(static_cast<int32_t>(r));
      }
    }
    if (!safe_inside || reaches(k, readers)) continue;
    for (int32_t r : readers) successors[static_cast<size_t>(r)].push_back(k);
    kept.push_back(donation);
  }

  // Kahn's order, earliest made first among the ready kernels, except that a ready collective
  // goes first: its communication then overlaps the kernels after it (a gradient's all-reduce
  // starts while the rest of the backward pass runs).
  std::vector<int32_t> waiting(count, 0);
  for (const auto& next : successors) {
    for (int32_t k : next) ++waiting[static_cast<size_t>(k)];
  }
  std::vector<bool> collective(count, false);
  for (const auto& [node, k] : collectives) collective[static_cast<size_t>(k)] = true;
  using Rank = std::pair<bool, int32_t>;  // (not a collective, kernel)
  std::priority_queue<Rank, std::vector<Rank>, std::greater<>> ready;
  auto make_ready = [&](int32_t k) { ready.emplace(!collective[static_cast<size_t>(k)], k); };
  for (size_t k = 0; k < count; ++k) {
    if (waiting[k] == 0) make_ready(static_cast<int32_t>(k));
  }
  std::vector<KernelGroup> ordered;
  while (!ready.empty()) {
    int32_t k = ready.top().second;
    ready.pop();
    ordered.push_back(std::move(kernels[static_cast<size_t>(k)]));
    for (int32_t next : successors[static_cast<size_t>(k)]) {
      if (--waiting[static_cast<size_t>(next)] == 0) make_ready(next);
    }
  }
  kernels = std::move(ordered);
  return kept;
}

}  // namespace kiln
