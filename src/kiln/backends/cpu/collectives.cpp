// The all_reduce buckets of a CPU program in a distributed run (see collectives.h).
#include "kiln/backends/cpu/collectives.h"

#include <algorithm>
#include <cstring>

#include "kiln/ir/error.h"

namespace kiln::cpu {

Collectives::Collectives(const Program& program, const ProgramBuffers& plan,
                         dist::Communicator& comm, int64_t bucket_bytes)
    : comm_(comm) {
  const Graph& graph = *program.module.graph;
  const size_t kernels = program.kernels.size();
  member_of_kernel_.assign(kernels, -1);
  waits_before_.resize(kernels);
  std::vector<int32_t> member_of_node(static_cast<size_t>(graph.size()), -1);
  std::vector<bool> waited;
  bool open = false;  // the last bucket still takes members
  for (size_t k = 0; k < kernels; ++k) {
    const KernelGroup& group = program.kernels[k];
    // The buckets whose results this kernel reads: closed (the kernel needs them) and, the
    // first time, finished before it.
    for (int32_t id : group.nodes) {
      for (int32_t operand : graph.node(id).inputs) {
        int32_t member = member_of_node[static_cast<size_t>(plan.root[static_cast<size_t>(operand)])];
        if (member < 0) continue;
        size_t bucket = members_[static_cast<size_t>(member)].bucket;
        if (bucket + 1 == buckets_.size()) open = false;
        if (!waited[bucket]) waits_before_[k].push_back(bucket);
        waited[bucket] = true;
      }
    }
    const Node& node = graph.node(group.nodes.back());
    if (node.op != OpKind::all_reduce) continue;
    check(group.nodes.size() == 1, "all_reduce", "node %", group.nodes.back(),
          " is fused with other nodes");
    Member member{group.nodes.back(), node.inputs[0],
                  shape_numel(node.shape) * static_cast<int64_t>(dtype_size(node.dtype))};
    if (!open || buckets_.back().dtype != node.dtype ||
        (!buckets_.back().members.empty() &&
         static_cast<int64_t>(buckets_.back().staging.size()) + member.bytes > bucket_bytes)) {
      buckets_.emplace_back().dtype = node.dtype;
      waited.push_back(false);
      open = true;
    }
    Bucket& bucket = buckets_.back();
    member.bucket = buckets_.size() - 1;
    member.offset = static_cast<int64_t>(bucket.staging.size());
    bucket.staging.resize(bucket.staging.size() + static_cast<size_t>(member.bytes));
    bucket.members.push_back(members_.size());
    member_of_kernel_[k] = static_cast<int32_t>(members_.size());
    member_of_node[static_cast<size_t>(member.node)] = static_cast<int32_t>(members_.size());
    members_.push_back(member);
  }
  for (size_t b = 0; b < buckets_.size(); ++b) {
    if (!waited[b]) unread_.push_back(b);
  }
}

// A run that ended in an Error may leave sums in flight over the staging bytes.
Collectives::~Collectives() {
  for (Bucket& bucket : buckets_) {
    if (!bucket.work) continue;
    try {
      bucket.work->wait();
    } catch (const Error&) {
      // The run already failed with this error or an earlier one.
    }
  }
}

Kernel Collectives::kernel(size_t k) {
  auto member = static_cast<size_t>(member_of_kernel_[k]);
  return {[this, member](const Buffers& buffers, std::byte*) { start(member, buffers); }};
}

void Collectives::start(size_t index, const Buffers& buffers) {
  const Member& member = members_[index];
  Bucket& bucket = buckets_[member.bucket];
  if (member.bytes > 0) {
    std::memcpy(bucket.staging.data() + member.offset, buffers.at<std::byte>(member.operand),
                static_cast<size_t>(member.bytes));
  }
  if (index != bucket.members.back()) return;
  const auto count = static_cast<int64_t>(bucket.staging.size()) /
                     static_cast<int64_t>(dtype_size(bucket.dtype));
  bucket.work = comm_.all_reduce_sum(bucket.staging.data(), count, bucket.dtype);
}

void Collectives::finish(size_t index, const Buffers& buffers) {
  Bucket& bucket = buckets_[index];
  check(bucket.work != nullptr, "all_reduce", "bucket ", index, " read before it was started");
  std::unique_ptr<dist::Work> work = std::move(bucket.work);
  work->wait();
  for (size_t m : bucket.members) {
    const Member& member = members_[m];
    if (member.bytes > 0) {
      std::memcpy(buffers.at<std::byte>(member.node), bucket.staging.data() + member.offset,
                  static_cast<size_t>(member.bytes));
    }
  }
}

void Collectives::after_run(const Buffers& buffers) {
  for (size_t b : unread_) finish(b, buffers);
}

}  // namespace kiln::cpu
