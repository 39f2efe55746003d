// What every communicator shares (any, the argument checks), the single-process communicator, and
// world(): which communicator this process gets, from the variables its launcher set.
#include "kiln/dist/communicator.h"

#include <sched.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>

#include "kiln/dist/internal.h"
#include "kiln/ir/error.h"

namespace kiln::dist {
namespace {

class FinishedWork : public Work {
 public:
  void wait() override {}
};

// One process is the whole run: every collective leaves the data as it is. No MPI is initialised.
class SingleProcess : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  int local_rank() const override { return 0; }
  int local_size() const override { return 1; }
  std::string backend() const override { return "none"; }

  std::unique_ptr<Work> all_reduce_sum(void*, int64_t count, DType dtype) override {
    check_all_reduce(count, dtype);
    return std::make_unique<FinishedWork>();
  }
  void broadcast(void*, int64_t bytes, int root) override { check_broadcast(bytes, root, 1); }
  void barrier() override {}
  std::vector<std::string> all_gather(const std::string& bytes) override { return {bytes}; }

  void set_timeout(double seconds) override { check_timeout(seconds); }
  CommStats stats() const override { return {}; }
};

bool launched_by_mpi() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMIX_RANK") != nullptr;
}

std::unique_ptr<Communicator> make_world() {
  if (launched_by_mpi()) return make_mpi_communicator();
  if (const char* text = std::getenv("WORLD_SIZE")) {
    int world_size = 0;
    const char* end = text + std::strlen(text);
    auto [stop, error] = std::from_chars(text, end, world_size);
    check(error == std::errc() && stop == end, "dist", "WORLD_SIZE=", text, " is not a number");
    if (world_size > 1) {
      fail("dist", "WORLD_SIZE=", world_size,
           " was set but the process was not started by an MPI launcher: start it with ",
           "`mpirun -np ", world_size, " kiln ...`");
    }
  }
  return std::make_unique<SingleProcess>();
}

}  // namespace

void check_all_reduce(int64_t count, DType dtype) {
  check(count >= 0, "dist", "all_reduce_sum of ", count, " elements");
  check(dtype == DType::f32 || dtype == DType::f64 || dtype == DType::i32 || dtype == DType::i64,
        "dist", "all_reduce_sum sums f32, f64, i32 or i64, not ", dtype_name(dtype));
}

void check_broadcast(int64_t bytes, int root, int size) {
  check(bytes >= 0, "dist", "broadcast of ", bytes, " bytes");
  check(root >= 0 && root < size, "dist", "broadcast from rank ", root, " of ", size, " ranks");
}

void check_timeout(double seconds) {
  check(seconds > 0, "dist", "the collectives' timeout must be positive, not ", seconds, " s");
}

bool Communicator::any(bool flag) {
  int32_t count = flag ? 1 : 0;
  all_reduce_sum(&count, 1, DType::i32)->wait();
  return count > 0;
}

Communicator& world() {
  // Never destroyed: the MPI communicator ends MPI from an exit hook, which needs the exit status.
  static Communicator* const instance = make_world().release();
  return *instance;
}

int threads_per_process(int cores) {
  int threads = cores / world().local_size();
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) == 0) {
    threads = std::min(threads, CPU_COUNT(&allowed));
  }
  return std::max(1, threads);
}

}  // namespace kiln::dist
