// A steady-state run of a CPU executable allocates nothing but its output tensors: intermediates
// live in the arena planned at compile time. Counted by replacing operator new in this binary.
// (oneDNN's execute() allocates a few bytes of bookkeeping per matrix multiply, so the graph here
// has none.)
#include <atomic>
#include <cstdlib>
#include <new>

#include "cpu_test_util.h"

namespace {
std::atomic<int64_t> allocations{0};
}  // namespace

// Every form of new and delete is replaced, so that memory is always freed by the allocator that
// made it (AddressSanitizer checks that): plain, array and nothrow forms with malloc, aligned forms (tensor
// storage) with aligned_alloc.
void* operator new(size_t bytes) {
  ++allocations;
  if (void* p = std::malloc(bytes ? bytes : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t bytes) { return operator new(bytes); }
void* operator new(size_t bytes, std::align_val_t alignment) {
  ++allocations;
  auto align = static_cast<size_t>(alignment);
  if (void* p = std::aligned_alloc(align, (bytes + align - 1) / align * align)) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t bytes, std::align_val_t alignment) {
  return operator new(bytes, alignment);
}
void* operator new(size_t bytes, const std::nothrow_t&) noexcept {
  ++allocations;
  return std::malloc(bytes ? bytes : 1);
}
void* operator new[](size_t bytes, const std::nothrow_t& tag) noexcept {
  return operator new(bytes, tag);
}
// GCC 12 at -O1 inlines these deletes where a `new` pointer is freed and warns that free() gets
// memory from operator new: these are the replacements, which make new and free a pair here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop

namespace kiln {
namespace {

TEST(CpuAlloc, SteadyRunAllocatesOnlyItsOutputs) {
  Graph graph;
  testing::Feeds feeds(graph);
  Value x = feeds.any(DType::f32, {300, 200});
  Value ids = feeds.integers(DType::i32, {50}, 0, 300);
  Value seed = feeds.scalar(DType::i64, 1), offset = feeds.scalar(DType::i64, 2);
  Value h = layer_norm(gelu(x * 2.0), feeds.any(DType::f32, {200}), feeds.any(DType::f32, {200}),
                       1e-5);
  h = dropout(softmax(transpose(h, {1, 0}), 0), seed, offset, 0.1, 0);
  std::vector<Value> outputs = {reduce_sum(h, {0}), gather(h, ids, 1),
                                cast(reduce_max(x, {1}), DType::bf16)};
  auto executable = make_cpu_backend()->compile(graph, outputs);
  executable->run(feeds.arguments());  // first runs may start the thread pool
  executable->run(feeds.arguments());

  int64_t before = allocations;
  std::vector<Tensor> results = executable->run(feeds.arguments());
  int64_t during_run = allocations - before;

  before = allocations;
  std::vector<Tensor> fresh(outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    fresh[i] = Tensor(outputs[i].dtype(), outputs[i].shape());
  }
  int64_t for_outputs = allocations - before;
  EXPECT_EQ(during_run, for_outputs);
  testing::expect_matches_reference(graph, outputs, feeds.arguments());
}

}  // namespace
}  // namespace kiln
