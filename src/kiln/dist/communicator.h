// The processes of a distributed run and the collectives between them, as torch.distributed's
// process group: one Communicator per process, for the whole run (dist::world()). Backends run
// the graph's all_reduce through it; the Trainer shards data, gathers evaluation outputs and
// agrees on stopping through it. Implemented on OpenMPI (mpi_communicator.cpp) when the process
// was started by an MPI launcher, and by a single-process communicator otherwise (no MPI is
// initialised then). A NCCL communicator (GPU buffers, its unique id broadcast over this one)
// implements the same interface.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kiln/ir/dtype.h"

namespace kiln::dist {

// A collective in flight. wait() blocks until it is done: its buffer then holds the result on
// this rank. It throws Error when the collective failed or did not finish within the
// communicator's timeout (another rank died or stopped meeting the collectives).
class Work {
 public:
  virtual ~Work() = default;
  virtual void wait() = 0;
};

// Totals since the communicator was made, for the counters a run prints.
struct CommStats {
  int64_t all_reduce_bytes = 0;  // payload bytes this rank all-reduced
  int64_t all_reduces = 0;       // all_reduce calls
  double wait_seconds = 0.0;     // time spent in Work::wait and in blocking collectives
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // The ranks on this machine, and this process's place among them.
  virtual int local_rank() const = 0;
  virtual int local_size() const = 0;
  // What runs the collectives ("mpi", or "none" for a single process), for messages.
  virtual std::string backend() const = 0;

  // Sums `count` elements of `dtype` at `data` (host memory, f32/f64/i32/i64) over all ranks,
  // in place. Every rank ends with bitwise the same sum, so replicas that apply it stay equal.
  // Starts now, after the collectives started before it (every rank must start the same
  // collectives in the same order); `data` must stay valid and untouched until wait().
  virtual std::unique_ptr<Work> all_reduce_sum(void* data, int64_t count, DType dtype) = 0;
  // `bytes` bytes at `data` from rank `root` to every rank. Blocking.
  virtual void broadcast(void* data, int64_t bytes, int root) = 0;
  // Returns when every rank has called it.
  virtual void barrier() = 0;
  // Every rank's `bytes`, in rank order (sizes may differ). Blocking.
  virtual std::vector<std::string> all_gather(const std::string& bytes) = 0;

  // Whether `flag` is true on any rank (a stop request). Blocking.
  bool any(bool flag);

  // A collective waiting longer than this ends with an Error (--ddp_timeout; default 1800 s
  // as transformers').
  virtual void set_timeout(double seconds) = 0;
  virtual CommStats stats() const = 0;
};

// The run's communicator: made on first use from the environment. Under mpirun (OpenMPI's
// OMPI_COMM_WORLD_* variables, or PMIx's) an MPI communicator over every process of the job;
// otherwise a single process. A torchrun-style WORLD_SIZE above 1 without an MPI launcher is an
// Error that says to start the run with mpirun.
Communicator& world();

// The OpenMP threads a rank runs by default: its share of the machine's `cores` (cores /
// local_size()), no more than the CPUs it may run on (its affinity mask, which mpirun narrows when
// it binds ranks to cores), and at least 1.
int threads_per_process(int cores);

// Whether this process is the one that writes shared files (rank 0), as HF's
// is_world_process_zero.
inline bool is_main_process() { return world().rank() == 0; }

}  // namespace kiln::dist
