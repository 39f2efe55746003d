// What the single-process and MPI communicators share: the argument checks every communicator
// makes, so that a mistake fails the same way in one process as under mpirun, and the MPI
// communicator's maker, which world() calls.
#pragma once

#include <cstdint>
#include <memory>

#include "kiln/dist/communicator.h"

namespace kiln::dist {

// Throws Error unless all_reduce_sum can sum `count` elements of `dtype` (f32, f64, i32, i64).
void check_all_reduce(int64_t count, DType dtype);
// Throws Error unless `root` is a rank of a communicator of `size` ranks and `bytes` >= 0.
void check_broadcast(int64_t bytes, int root, int size);
// Throws Error unless `seconds` > 0.
void check_timeout(double seconds);

// Initialises MPI; the communicator over every process of the job.
std::unique_ptr<Communicator> make_mpi_communicator();

}  // namespace kiln::dist
