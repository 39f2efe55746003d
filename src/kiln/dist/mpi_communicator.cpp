// The communicator of processes started by mpirun (OpenMPI). Every MPI call, from MPI_Init_thread
// to MPI_Finalize, runs on one communication thread, which starts the submitted collectives in
// submission order (so in the same order on every rank) and polls each with short sleeps, leaving
// the cores to the compute threads.
#define OMPI_SKIP_MPICXX  // the C interface only, without OpenMPI's C++ bindings and their library
#include <mpi.h>
#include <stdlib.h>  // on_exit
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <atomic>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <sstream>
#include <thread>

#include "kiln/dist/internal.h"
#include "kiln/ir/error.h"

namespace kiln::dist {
namespace {

using Clock = std::chrono::steady_clock;
using Bytes = std::vector<std::byte>;

// A collective submitted to the communication thread, which calls `run`. An all-reduce works on
// the caller's bytes (which must outlive the job: after a timeout the process aborts the MPI job
// at exit); the other collectives on buffers of the job's own.
struct Job {
  std::string what;  // "all_reduce of 123 bytes", for messages
  std::function<void()> run;
  bool done = false;  // these two are guarded by the communicator's mutex
  std::exception_ptr error;
};

void check_mpi(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  fail("mpi", call, ": ", std::string(text, length));
}

MPI_Datatype mpi_type(DType dtype) {
  switch (dtype) {
    case DType::f32: return MPI_FLOAT;
    case DType::f64: return MPI_DOUBLE;
    case DType::i32: return MPI_INT32_T;
    case DType::i64: return MPI_INT64_T;
    default: fail("dist", "no MPI type for ", dtype_name(dtype));
  }
}

// `bytes` bytes at `data`, then zeros up to `size` bytes.
std::shared_ptr<Bytes> padded_copy(const void* data, int64_t bytes, int64_t size) {
  auto copy = std::make_shared<Bytes>();
  copy->reserve(size);
  copy->insert(copy->end(), static_cast<const std::byte*>(data),
               static_cast<const std::byte*>(data) + bytes);
  copy->resize(size);
  return copy;
}

// Made once, by world(), and never destroyed: its exit hook ends MPI and the thread.
class MpiCommunicator : public Communicator {
 public:
  MpiCommunicator() {
    std::promise<void> started;
    thread_ = std::thread([this, &started] { serve(started); });
    try {
      started.get_future().get();
    } catch (...) {
      thread_.join();
      throw;
    }
    on_exit([](int status, void* self) { static_cast<MpiCommunicator*>(self)->at_exit(status); },
            this);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_rank() const override { return local_rank_; }
  int local_size() const override { return local_size_; }
  std::string backend() const override { return "mpi"; }

  std::unique_ptr<Work> all_reduce_sum(void* data, int64_t count, DType dtype) override;
  void broadcast(void* data, int64_t bytes, int root) override;
  void barrier() override;
  std::vector<std::string> all_gather(const std::string& bytes) override;

  void set_timeout(double seconds) override {
    check_timeout(seconds);
    std::lock_guard lock(mutex_);
    timeout_seconds_ = seconds;
  }
  CommStats stats() const override {
    std::lock_guard lock(mutex_);
    return stats_;
  }

  // Blocks until `job` is done and throws its error, or Error when it is not done within the
  // timeout; from then on every collective fails, and the process aborts the MPI job at exit.
  void wait(Job& job);

 private:
  enum class Exit { no, finalize, abort };

  std::shared_ptr<Job> submit(std::string what, std::function<void()> run);
  // The communication thread and what runs there.
  void serve(std::promise<void>& started);
  void initialise();
  void await(MPI_Request& request);
  [[noreturn]] void abort_job();
  // The exit hook: MPI_Finalize after the queued collectives when the process exits with status 0
  // and no collective timed out; otherwise MPI_Abort, so that no other rank waits for this one
  // (MPI_Finalize would wait for ranks that may be waiting for this one's collectives).
  void at_exit(int status);

  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
  pid_t pid_ = getpid();
  std::thread thread_;
  mutable std::mutex mutex_;
  std::condition_variable queued_, finished_;
  std::deque<std::shared_ptr<Job>> queue_;
  std::string broken_;  // the timeout that ended collectives on this rank
  std::atomic<Exit> exit_ = Exit::no;
  int exit_status_ = 0;
  double timeout_seconds_ = 1800;
  CommStats stats_;
};

class MpiWork : public Work {
 public:
  MpiWork(MpiCommunicator& communicator, std::shared_ptr<Job> job)
      : communicator_(communicator), job_(std::move(job)) {}

  void wait() override {
    if (!job_) return;
    communicator_.wait(*job_);
    job_.reset();
  }

 private:
  MpiCommunicator& communicator_;
  std::shared_ptr<Job> job_;  // null once waited for
};

std::unique_ptr<Work> MpiCommunicator::all_reduce_sum(void* data, int64_t count, DType dtype) {
  check_all_reduce(count, dtype);
  const auto element = static_cast<int64_t>(dtype_size(dtype));
  const int64_t bytes = count * element;
  check(count <= INT_MAX, "dist", "all_reduce_sum of ", count, " elements: over ", INT_MAX);
  {
    std::lock_guard lock(mutex_);
    stats_.all_reduce_bytes += bytes;
    stats_.all_reduces += 1;
  }
  // MPI_Allreduce may sum a float in different orders on different ranks. Here each rank sums one
  // chunk (reduce-scatter) and the sums are then copied to every rank (all-gather): every element
  // is summed once, so every rank gets the same bits. Both work on the caller's bytes (a gradient
  // bucket of hundreds of MB is not copied); a rank's own chunk of sums is the only other buffer.
  std::vector<int> counts(static_cast<size_t>(size_)), offsets(static_cast<size_t>(size_));
  for (int rank = 0, offset = 0; rank < size_; ++rank) {
    counts[static_cast<size_t>(rank)] =
        static_cast<int>(count / size_ + (rank < count % size_ ? 1 : 0));
    offsets[static_cast<size_t>(rank)] = offset;
    offset += counts[static_cast<size_t>(rank)];
  }
  std::shared_ptr<Job> job = submit(
      "all_reduce of " + std::to_string(bytes) + " bytes",
      [this, data, counts = std::move(counts), offsets = std::move(offsets), element, dtype] {
        MPI_Datatype type = mpi_type(dtype);
        const int mine = counts[static_cast<size_t>(rank_)];
        Bytes sum(static_cast<size_t>(mine * element));
        MPI_Request request;
        check_mpi(MPI_Ireduce_scatter(data, sum.data(), counts.data(), type, MPI_SUM,
                                      MPI_COMM_WORLD, &request),
                  "MPI_Ireduce_scatter");
        await(request);
        check_mpi(MPI_Iallgatherv(sum.data(), mine, type, data, counts.data(), offsets.data(),
                                  type, MPI_COMM_WORLD, &request),
                  "MPI_Iallgatherv");
        await(request);
      });
  return std::make_unique<MpiWork>(*this, std::move(job));
}

void MpiCommunicator::broadcast(void* data, int64_t bytes, int root) {
  check_broadcast(bytes, root, size_);
  std::shared_ptr<Bytes> buffer = padded_copy(data, rank_ == root ? bytes : 0, bytes);
  std::ostringstream what;
  what << "broadcast of " << bytes << " bytes from rank " << root;
  wait(*submit(what.str(), [this, buffer, root] {
    constexpr int64_t kPiece = int64_t{1} << 30;  // MPI counts are ints
    for (int64_t offset = 0; offset < static_cast<int64_t>(buffer->size()); offset += kPiece) {
      int piece = static_cast<int>(std::min<int64_t>(kPiece, buffer->size() - offset));
      MPI_Request request;
      check_mpi(
          MPI_Ibcast(buffer->data() + offset, piece, MPI_BYTE, root, MPI_COMM_WORLD, &request),
          "MPI_Ibcast");
      await(request);
    }
  }));
  std::copy_n(buffer->data(), bytes, static_cast<std::byte*>(data));
}

void MpiCommunicator::barrier() {
  wait(*submit("barrier", [this] {
    MPI_Request request;
    check_mpi(MPI_Ibarrier(MPI_COMM_WORLD, &request), "MPI_Ibarrier");
    await(request);
  }));
}

std::vector<std::string> MpiCommunicator::all_gather(const std::string& bytes) {
  auto mine = std::make_shared<std::string>(bytes);
  auto gathered = std::make_shared<std::vector<std::string>>();
  wait(*submit("all_gather of " + std::to_string(bytes.size()) + " bytes", [this, mine, gathered] {
    int64_t my_size = static_cast<int64_t>(mine->size());
    std::vector<int64_t> sizes(size_);
    MPI_Request request;
    check_mpi(MPI_Iallgather(&my_size, 1, MPI_INT64_T, sizes.data(), 1, MPI_INT64_T,
                             MPI_COMM_WORLD, &request),
              "MPI_Iallgather");
    await(request);
    std::vector<int> counts(size_), offsets(size_);
    int64_t total = 0;
    for (int rank = 0; rank < size_; ++rank) {
      check(total + sizes[rank] <= INT_MAX, "dist", "all_gather of more than ", INT_MAX, " bytes");
      counts[rank] = static_cast<int>(sizes[rank]);
      offsets[rank] = static_cast<int>(total);
      total += sizes[rank];
    }
    std::string all(total, '\0');
    check_mpi(MPI_Iallgatherv(mine->data(), counts[rank_], MPI_BYTE, all.data(), counts.data(),
                              offsets.data(), MPI_BYTE, MPI_COMM_WORLD, &request),
              "MPI_Iallgatherv");
    await(request);
    for (int rank = 0; rank < size_; ++rank) {
      gathered->push_back(all.substr(offsets[rank], counts[rank]));
    }
  }));
  return std::move(*gathered);
}

std::shared_ptr<Job> MpiCommunicator::submit(std::string what, std::function<void()> run) {
  auto job = std::make_shared<Job>();
  job->what = std::move(what);
  job->run = std::move(run);
  {
    std::lock_guard lock(mutex_);
    if (!broken_.empty()) throw Error(broken_);
    check(exit_ == Exit::no, "dist", "rank ", rank_, ": ", job->what, " after MPI ended at exit");
    queue_.push_back(job);
  }
  queued_.notify_one();
  return job;
}

void MpiCommunicator::wait(Job& job) {
  Clock::time_point start = Clock::now();
  std::unique_lock lock(mutex_);
  // At most 1e9 s: wait_for counts in nanoseconds, in 64 bits.
  finished_.wait_for(lock, std::chrono::duration<double>(std::min(timeout_seconds_, 1e9)),
                     [&] { return job.done || !broken_.empty(); });
  stats_.wait_seconds += std::chrono::duration<double>(Clock::now() - start).count();
  if (job.done) {
    if (job.error) std::rethrow_exception(job.error);
    return;
  }
  if (broken_.empty()) {
    std::ostringstream message;
    message << "[dist] rank " << rank_ << ": a collective (" << job.what
            << ") did not finish within " << timeout_seconds_
            << " s; another rank has died or stopped meeting collectives";
    broken_ = message.str();
    finished_.notify_all();  // the other waiters fail now, not after their own timeout
  }
  throw Error(broken_);
}

void MpiCommunicator::serve(std::promise<void>& started) {
  try {
    initialise();
    started.set_value();
  } catch (...) {
    started.set_exception(std::current_exception());
    return;
  }
  for (;;) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock lock(mutex_);
      queued_.wait(lock, [&] { return !queue_.empty() || exit_ != Exit::no; });
      if (exit_ == Exit::abort || queue_.empty()) break;
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    std::exception_ptr error;
    try {
      job->run();
    } catch (...) {
      error = std::current_exception();
    }
    {
      std::lock_guard lock(mutex_);
      job->done = true;
      job->error = error;
    }
    finished_.notify_all();
  }
  if (exit_ == Exit::abort) abort_job();
  MPI_Finalize();
}

void MpiCommunicator::initialise() {
  // A 20 µs sleep between polls then lasts 20 µs, not up to 50 µs more (Linux's default slack).
  prctl(PR_SET_TIMERSLACK, 1);
  int provided = 0;
  check_mpi(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided), "MPI_Init_thread");
  if (provided < MPI_THREAD_SERIALIZED) {
    MPI_Finalize();
    fail("mpi", "MPI_Init_thread provides thread level ", provided,
         ", below MPI_THREAD_SERIALIZED: this MPI was built without thread support");
  }
  // Errors come back as codes, which become Errors, instead of ending the process.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  MPI_Comm machine;
  check_mpi(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &machine),
            "MPI_Comm_split_type");
  MPI_Comm_rank(machine, &local_rank_);
  MPI_Comm_size(machine, &local_size_);
  MPI_Comm_free(&machine);
}

// Polls `request` until it completes: back to back for the first 50 µs, in which a collective
// whose ranks are all there completes, then with sleeps between polls, 20 µs at first and up to
// 1 ms while another rank still computes. (MPI's blocking calls would spin a core all along.)
void MpiCommunicator::await(MPI_Request& request) {
  using std::chrono::microseconds;
  Clock::time_point start = Clock::now();
  microseconds pause(20);
  for (;;) {
    int done = 0;
    check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done) return;
    if (exit_ == Exit::abort) abort_job();
    Clock::duration waited = Clock::now() - start;
    if (waited < microseconds(50)) continue;
    std::this_thread::sleep_for(pause);
    if (waited > std::chrono::milliseconds(2)) pause = std::min(pause * 2, microseconds(1000));
  }
}

void MpiCommunicator::abort_job() {
  std::string why;
  int status = 1;
  {
    std::lock_guard lock(mutex_);
    if (exit_status_ != 0) status = exit_status_;
    why = broken_.empty() ? "rank " + std::to_string(rank_) + " exits with status " +
                                std::to_string(exit_status_)
                          : broken_;
  }
  std::fprintf(stderr, "%s; aborting the MPI job\n", why.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, status);
  std::_Exit(1);  // not reached: MPI_Abort ends the process but is not declared noreturn
}

void MpiCommunicator::at_exit(int status) {
  // A forked child has no communication thread, and MPI may exit from that thread itself.
  if (getpid() != pid_ || std::this_thread::get_id() == thread_.get_id()) return;
  {
    std::lock_guard lock(mutex_);
    exit_status_ = status;
    // 128 + SIGINT or SIGTERM: the run stopped on a signal after every rank agreed on the step
    // to stop at (the Trainer's stop), so it ends MPI as a finished run does.
    const bool stopped = status == 128 + SIGINT || status == 128 + SIGTERM;
    exit_ = (status == 0 || stopped) && broken_.empty() ? Exit::finalize : Exit::abort;
  }
  queued_.notify_one();
  thread_.join();
}

}  // namespace

std::unique_ptr<Communicator> make_mpi_communicator() {
  return std::make_unique<MpiCommunicator>();
}

}  // namespace kiln::dist
