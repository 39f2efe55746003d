// Buffer planning: homes of values, liveness of kernel results, greedy-by-size arena offsets.
#include "kiln/compiler/buffer_plan.h"

#include <algorithm>
#include <numeric>
#include <unordered_set>

#include "kiln/compiler/views.h"

namespace kiln {
namespace {

int64_t align_up(int64_t value, int64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

bool lifetimes_meet(const BufferRequest& a, const BufferRequest& b) {
  return a.first <= b.last && b.first <= a.last;
}

}  // namespace

MemoryPlan plan_memory(std::vector<BufferRequest> buffers, int64_t alignment) {
  MemoryPlan plan;
  plan.offsets.assign(buffers.size(), 0);
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return buffers[a].bytes > buffers[b].bytes;
  });
  std::vector<size_t> placed;
  std::vector<std::pair<int64_t, int64_t>> taken;  // [begin, end) of placed live neighbours
  for (size_t index : order) {
    const BufferRequest& buffer = buffers[index];
    if (buffer.bytes == 0) continue;
    taken.clear();
    for (size_t other : placed) {
      if (lifetimes_meet(buffer, buffers[other])) {
        taken.emplace_back(plan.offsets[other], plan.offsets[other] + buffers[other].bytes);
      }
    }
    std::sort(taken.begin(), taken.end());
    // The first gap, scanning upwards, that holds the buffer.
    int64_t offset = 0;
    for (const auto& [begin, end] : taken) {
      if (offset + buffer.bytes <= begin) break;
      offset = std::max(offset, align_up(end, alignment));
    }
    plan.offsets[index] = offset;
    plan.arena_bytes = std::max(plan.arena_bytes, offset + buffer.bytes);
    placed.push_back(index);
  }
  plan.arena_bytes = align_up(plan.arena_bytes, alignment);
  plan.buffers = std::move(buffers);
  return plan;
}

std::vector<int32_t> written_nodes(const KernelGroup& group) {
  if (group.kind == KernelKind::single) return {group.nodes.back()};
  return group.results;
}

ProgramBuffers plan_buffers(const Program& program, const std::vector<int64_t>& scratch_bytes,
                            int64_t alignment) {
  const Graph& graph = *program.module.graph;
  auto count = static_cast<size_t>(graph.size());
  ProgramBuffers buffers;
  buffers.root.resize(count);
  buffers.root_offset.assign(count, 0);
  buffers.home.assign(count, BufferHome::none);
  buffers.offset.assign(count, -1);
  buffers.argument.assign(count, -1);
  buffers.output.assign(count, -1);
  for (int32_t id = 0; id < graph.size(); ++id) {
    const Node& node = graph.node(id);
    auto index = static_cast<size_t>(id);
    buffers.root[index] = view_root(graph, id, &buffers.root_offset[index]);
    if (node.op == OpKind::input) buffers.home[index] = BufferHome::argument;
    if (node.op == OpKind::constant) buffers.home[index] = BufferHome::constant;
  }
  auto root = [&](int32_t id) { return buffers.root[static_cast<size_t>(id)]; };
  // Lifetimes in kernel steps of what kernels write and read.
  std::vector<int32_t> first(count, -1), last(count, -1);
  for (size_t k = 0; k < program.kernels.size(); ++k) {
    const KernelGroup& group = program.kernels[k];
    auto step = static_cast<int32_t>(k);
    std::unordered_set<int32_t> computed;  // values of the group held in registers
    if (group.kind != KernelKind::single) {
      for (int32_t id : group.nodes) {
        if (graph.node(id).op != OpKind::broadcast) computed.insert(id);
      }
    }
    for (int32_t id : group.nodes) {
      for (int32_t operand : graph.node(id).inputs) {
        int32_t r = root(operand);
        if (!computed.contains(r)) last[static_cast<size_t>(r)] = step;
      }
    }
    for (int32_t id : written_nodes(group)) {
      auto index = static_cast<size_t>(root(id));
      first[index] = step;
      buffers.home[index] = BufferHome::arena;
    }
  }
  // Donated outputs first, then the first output of each other written root gets a tensor; an
  // output that is part of its root's bytes is copied from them.
  for (const Donation& donation : program.donations) {
    int32_t output = program.module.outputs[static_cast<size_t>(donation.output)];
    auto index = static_cast<size_t>(root(output));
    if (buffers.home[index] != BufferHome::arena || !covers_root(graph, output)) continue;
    buffers.home[index] = BufferHome::donated;
    buffers.argument[index] = donation.input;
    buffers.output[index] = donation.output;
  }
  for (size_t o = 0; o < program.module.outputs.size(); ++o) {
    int32_t output = program.module.outputs[o];
    auto index = static_cast<size_t>(root(output));
    if (buffers.home[index] != BufferHome::arena || !covers_root(graph, output)) continue;
    buffers.home[index] = BufferHome::output;
    buffers.output[index] = static_cast<int32_t>(o);
  }
  // Outputs still in the arena (parts of a root) are copied out after the last kernel.
  auto last_step = static_cast<int32_t>(program.kernels.size()) - 1;
  for (int32_t output : program.module.outputs) {
    auto index = static_cast<size_t>(root(output));
    if (buffers.home[index] == BufferHome::arena) last[index] = last_step;
  }
  std::vector<BufferRequest> requests;
  std::vector<int32_t> owner;  // node id, or -1 - kernel for a scratch buffer
  for (size_t k = 0; k < program.kernels.size(); ++k) {
    auto step = static_cast<int32_t>(k);
    for (int32_t id : written_nodes(program.kernels[k])) {
      auto index = static_cast<size_t>(root(id));
      if (buffers.home[index] != BufferHome::arena || first[index] != step) continue;
      const Node& node = graph.node(static_cast<int32_t>(index));
      int64_t bytes = shape_numel(node.shape) * static_cast<int64_t>(dtype_size(node.dtype));
      requests.push_back({bytes, step, std::max(step, last[index])});
      owner.push_back(static_cast<int32_t>(index));
    }
    if (k < scratch_bytes.size() && scratch_bytes[k] > 0) {
      requests.push_back({scratch_bytes[k], step, step});
      owner.push_back(-1 - step);
    }
  }
  buffers.plan = plan_memory(std::move(requests), alignment);
  buffers.scratch_offset.assign(program.kernels.size(), 0);
  for (size_t b = 0; b < owner.size(); ++b) {
    if (owner[b] >= 0) {
      buffers.offset[static_cast<size_t>(owner[b])] = buffers.plan.offsets[b];
    } else {
      buffers.scratch_offset[static_cast<size_t>(-1 - owner[b])] = buffers.plan.offsets[b];
    }
  }
  return buffers;
}

}  // namespace kiln
