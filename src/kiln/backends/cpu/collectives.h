// Internal: a CPU program's all_reduce kernels across the processes of a distributed run, as
// PyTorch's DDP reduces gradients. The operands are copied, in kernel order, into buckets of
// about kBucketBytes; a bucket's sum starts on the communicator's thread as soon as its last
// operand is copied, while the kernels after it (the rest of the backward pass) run; the first
// kernel that reads one of its results waits for it, and the sums are copied into the results'
// buffers then. A bucket also closes early when a kernel reads one of its results (a scalar
// all-reduced in the forward pass is waited for at once).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "kiln/backends/cpu/kernel.h"
#include "kiln/compiler/buffer_plan.h"
#include "kiln/dist/communicator.h"

namespace kiln::cpu {

// DDP's default bucket_cap_mb.
constexpr int64_t kBucketBytes = 25 << 20;

class Collectives {
 public:
  // Plans the buckets of `program`'s all_reduce kernels (single-node groups) over `plan`.
  Collectives(const Program& program, const ProgramBuffers& plan, dist::Communicator& comm,
              int64_t bucket_bytes = kBucketBytes);
  ~Collectives();
  Collectives(const Collectives&) = delete;
  Collectives& operator=(const Collectives&) = delete;

  // Whether kernel `k` is an all_reduce (its kernel is the one kernel(k) returns).
  bool reduces(size_t k) const { return member_of_kernel_[k] >= 0; }
  // Kernel k's all_reduce: copies its operand into its bucket, and starts the bucket's sum when
  // it is the last operand.
  Kernel kernel(size_t k);
  // Before kernel k runs: waits for the buckets whose results it is the first to read.
  void before(size_t k, const Buffers& buffers) {
    for (size_t b : waits_before_[k]) finish(b, buffers);
  }
  // After the last kernel: waits for the buckets nothing read (program outputs).
  void after_run(const Buffers& buffers);

 private:
  struct Member {
    int32_t node = 0, operand = 0;
    int64_t bytes = 0, offset = 0;  // in its bucket's staging bytes
    size_t bucket = 0;
  };
  struct Bucket {
    std::vector<size_t> members;
    DType dtype = DType::f32;
    std::vector<std::byte> staging;
    std::unique_ptr<dist::Work> work;
  };
  void start(size_t member, const Buffers& buffers);
  void finish(size_t bucket, const Buffers& buffers);

  dist::Communicator& comm_;
  std::vector<Member> members_;
  std::vector<Bucket> buckets_;
  std::vector<int32_t> member_of_kernel_;          // per kernel: its member, or -1
  std::vector<std::vector<size_t>> waits_before_;  // per kernel: buckets to finish first
  std::vector<size_t> unread_;                     // buckets finished after the run
};

}  // namespace kiln::cpu
