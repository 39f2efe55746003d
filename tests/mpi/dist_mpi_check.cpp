// Run under mpirun by dist_communicator_test: `dist_mpi_check` checks the MPI communicator's
// collectives on every rank and rank 0 prints "dist_mpi_check OK"; any failure exits 1 with the
// rank and what differed. Two modes end a rank's part early, to show that the job then ends instead
// of hanging: `timeout` (rank 1 stops meeting collectives, rank 0's all_reduce times out after 3 s)
// and `error_exit` (rank 0 exits with status 1 while rank 1 waits in a barrier).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "kiln/dist/communicator.h"
#include "kiln/ir/error.h"

namespace {

using kiln::DType;
using kiln::dist::Communicator;

void require(const Communicator& comm, bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error("rank " + std::to_string(comm.rank()) + ": " + what);
}

int env_int(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::atoi(value) : -1;
}

// Element `i` of rank `rank`'s array: sums over ranks are exact in every type.
template <typename T>
T element(int rank, int64_t i) {
  if constexpr (std::is_same_v<T, int64_t>) return (int64_t{rank + 1} << 40) + i;
  if constexpr (std::is_same_v<T, int32_t>) {
    return (rank + 1) * static_cast<int32_t>(i % 100000) - rank;
  }
  return static_cast<T>(rank + 1) * static_cast<T>(i % 1024);
}

template <typename T>
std::vector<T> rank_elements(const Communicator& comm, int64_t count) {
  std::vector<T> data(count);
  for (int64_t i = 0; i < count; ++i) data[i] = element<T>(comm.rank(), i);
  return data;
}

template <typename T>
void check_sums(const Communicator& comm, const std::vector<T>& data, const char* what) {
  for (int64_t i = 0; i < static_cast<int64_t>(data.size()); ++i) {
    T expected = 0;
    for (int rank = 0; rank < comm.size(); ++rank) expected += element<T>(rank, i);
    require(comm, data[i] == expected,
            std::string(what) + " of " + std::to_string(data.size()) + " elements: element " +
                std::to_string(i) + " is " + std::to_string(data[i]) + ", not " +
                std::to_string(expected));
  }
}

int64_t all_reduced_bytes = 0;  // what stats() should count

template <typename T>
void check_all_reduce(Communicator& comm, DType dtype, const char* what) {
  for (int64_t count : {0, 1, 7, 1000000}) {
    std::vector<T> data = rank_elements<T>(comm, count);
    comm.all_reduce_sum(data.data(), count, dtype)->wait();
    all_reduced_bytes += count * static_cast<int64_t>(sizeof(T));
    check_sums(comm, data, what);
  }
}

// Floats of mixed signs and magnitudes, whose sum depends on the order of the additions: every
// rank must still end with the same bits.
template <typename T>
void check_same_bits(Communicator& comm, DType dtype) {
  constexpr int64_t kCount = 100003;
  std::vector<T> data(kCount);
  uint32_t state = 12345u + 977u * static_cast<uint32_t>(comm.rank());
  for (T& value : data) {
    state = state * 1664525u + 1013904223u;
    value = std::ldexp(static_cast<T>(static_cast<int>(state >> 16) % 2001 - 1000),
                       static_cast<int>(state % 41) - 20);
  }
  comm.all_reduce_sum(data.data(), kCount, dtype)->wait();
  all_reduced_bytes += kCount * static_cast<int64_t>(sizeof(T));
  std::string bits(reinterpret_cast<const char*>(data.data()), kCount * sizeof(T));
  std::vector<std::string> everyone = comm.all_gather(bits);
  for (int rank = 0; rank < comm.size(); ++rank) {
    require(comm, everyone[rank] == everyone[0],
            "rank " + std::to_string(rank) + "'s sum differs from rank 0's in its bits");
  }
}

void check_overlap(Communicator& comm) {
  std::vector<float> a = rank_elements<float>(comm, 1000000);
  std::vector<int64_t> b = rank_elements<int64_t>(comm, 7);
  std::vector<double> c = rank_elements<double>(comm, 300001);
  std::vector<int32_t> d = rank_elements<int32_t>(comm, 1);
  auto work_a = comm.all_reduce_sum(a.data(), 1000000, DType::f32);
  auto work_b = comm.all_reduce_sum(b.data(), 7, DType::i64);
  auto work_c = comm.all_reduce_sum(c.data(), 300001, DType::f64);
  auto work_d = comm.all_reduce_sum(d.data(), 1, DType::i32);
  all_reduced_bytes += 1000000 * 4 + 7 * 8 + 300001 * 8 + 4;
  work_d->wait();
  work_c->wait();
  work_b->wait();
  work_a->wait();
  work_a->wait();  // a second wait changes nothing
  check_sums(comm, a, "overlapped f32 all_reduce");
  check_sums(comm, b, "overlapped i64 all_reduce");
  check_sums(comm, c, "overlapped f64 all_reduce");
  check_sums(comm, d, "overlapped i32 all_reduce");
}

void check_broadcast(Communicator& comm) {
  for (int root : {0, comm.size() - 1}) {
    for (int64_t bytes : {0, 10, 3000000}) {
      std::string data(bytes, static_cast<char>('a' + comm.rank()));
      comm.broadcast(data.data(), bytes, root);
      require(comm, data == std::string(bytes, static_cast<char>('a' + root)),
              "broadcast of " + std::to_string(bytes) + " bytes from rank " +
                  std::to_string(root) + " differs");
    }
  }
}

void check_all_gather(Communicator& comm) {
  // Rank r gives 3r bytes of 'A' + r: rank 0 gives none.
  std::vector<std::string> gathered =
      comm.all_gather(std::string(3 * comm.rank(), static_cast<char>('A' + comm.rank())));
  require(comm, static_cast<int>(gathered.size()) == comm.size(), "all_gather's rank count");
  for (int rank = 0; rank < comm.size(); ++rank) {
    require(comm, gathered[rank] == std::string(3 * rank, static_cast<char>('A' + rank)),
            "all_gather's part from rank " + std::to_string(rank));
  }
  std::string big(1 << 20, 'x');
  gathered = comm.all_gather(big);
  for (const std::string& part : gathered) require(comm, part == big, "all_gather of 1 MiB");
}

template <typename Call>
void require_error(const Communicator& comm, Call call, const std::string& what) {
  try {
    call();
  } catch (const kiln::Error&) {
    return;
  }
  require(comm, false, what + " did not throw Error");
}

void check_all(Communicator& comm) {
  require(comm, comm.backend() == "mpi", "backend is " + comm.backend());
  require(comm, comm.size() == env_int("OMPI_COMM_WORLD_SIZE"), "size");
  require(comm, comm.rank() == env_int("OMPI_COMM_WORLD_RANK"), "rank");
  require(comm, comm.local_size() == env_int("OMPI_COMM_WORLD_LOCAL_SIZE"), "local size");
  require(comm, comm.local_rank() == env_int("OMPI_COMM_WORLD_LOCAL_RANK"), "local rank");
  require(comm, kiln::dist::is_main_process() == (comm.rank() == 0), "is_main_process");
  int cores = static_cast<int>(std::thread::hardware_concurrency());
  int threads = kiln::dist::threads_per_process(cores);
  require(comm, threads >= 1 && threads <= std::max(1, cores / comm.local_size()),
          "threads_per_process(" + std::to_string(cores) + ") is " + std::to_string(threads));

  check_all_reduce<float>(comm, DType::f32, "f32 all_reduce");
  check_all_reduce<double>(comm, DType::f64, "f64 all_reduce");
  check_all_reduce<int32_t>(comm, DType::i32, "i32 all_reduce");
  check_all_reduce<int64_t>(comm, DType::i64, "i64 all_reduce");
  check_same_bits<float>(comm, DType::f32);
  check_same_bits<double>(comm, DType::f64);
  check_overlap(comm);

  check_broadcast(comm);
  comm.barrier();
  check_all_gather(comm);
  require(comm, comm.any(comm.rank() == comm.size() - 1), "any(true on the last rank)");
  require(comm, !comm.any(false), "any(false)");
  all_reduced_bytes += 2 * 4;

  uint16_t half = 0;
  require_error(comm, [&] { comm.all_reduce_sum(&half, 1, DType::bf16); }, "a bf16 all_reduce");
  require_error(comm, [&] { comm.broadcast(&half, 2, comm.size()); }, "a broadcast from no rank");
  require_error(comm, [&] { comm.set_timeout(0); }, "a timeout of 0 s");

  kiln::dist::CommStats stats = comm.stats();
  require(comm, stats.all_reduce_bytes == all_reduced_bytes,
          "stats count " + std::to_string(stats.all_reduce_bytes) + " bytes all-reduced, not " +
              std::to_string(all_reduced_bytes));
  // 4 types of 4 sizes, 2 of mixed floats, 4 overlapped, 2 by any().
  require(comm, stats.all_reduces == 16 + 2 + 4 + 2,
          "stats count " + std::to_string(stats.all_reduces) + " all-reduces");
  require(comm, stats.wait_seconds > 0, "stats count no time waited");

  // Rank 0 reports the time of a 4 MB all-reduce, for a look at the polling's cost.
  std::vector<float> data(1000000, 1.0f);
  comm.barrier();
  auto start = std::chrono::steady_clock::now();
  comm.all_reduce_sum(data.data(), 1000000, DType::f32)->wait();
  std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
  if (comm.rank() == 0) std::printf("all_reduce of 4 MB: %.2f ms\n", took.count());
}

// Rank 1 never joins the all-reduce; rank 0's wait times out after 3 s and later collectives fail
// at once.
int check_timeout(Communicator& comm) {
  comm.set_timeout(3);
  if (comm.rank() == 1) {
    std::this_thread::sleep_for(std::chrono::seconds(60));
    return 0;
  }
  std::vector<float> data(31, 1.0f);
  auto work = comm.all_reduce_sum(data.data(), 31, DType::f32);
  try {
    work->wait();
  } catch (const kiln::Error& error) {
    std::fprintf(stderr, "dist_mpi_check: %s\n", error.what());
    try {
      comm.barrier();
    } catch (const kiln::Error& later) {
      std::fprintf(stderr, "dist_mpi_check: a later barrier: %s\n", later.what());
    }
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "check";
  try {
    Communicator& comm = kiln::dist::world();
    if (mode == "timeout") return check_timeout(comm);
    if (mode == "error_exit") {
      if (comm.rank() == 0) return 1;
      comm.barrier();
      return 0;
    }
    check_all(comm);
    comm.barrier();
    if (comm.rank() == 0) std::printf("dist_mpi_check OK: %d ranks\n", comm.size());
    return 0;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "dist_mpi_check: %s\n", error.what());
    return 1;
  }
}
