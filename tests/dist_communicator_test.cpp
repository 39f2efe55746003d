// The communicators: the single-process one in this process, and the MPI one through
// tests/mpi/dist_mpi_check (DIST_MPI_CHECK) run under mpirun with 2 and 3 ranks, including ranks
// that stop meeting collectives or exit with an error, which must end the job instead of hanging.
#include <sched.h>

#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "kiln/dist/communicator.h"
#include "kiln/ir/error.h"
#include "mpi_test_util.h"

namespace kiln::dist {
namespace {

TEST(DistSingleProcess, IsRankZeroOfOne) {
  Communicator& comm = world();
  EXPECT_EQ(comm.backend(), "none");
  EXPECT_EQ(comm.rank(), 0);
  EXPECT_EQ(comm.size(), 1);
  EXPECT_EQ(comm.local_rank(), 0);
  EXPECT_EQ(comm.local_size(), 1);
  EXPECT_TRUE(is_main_process());
  EXPECT_EQ(&comm, &world());
}

TEST(DistSingleProcess, CollectivesLeaveTheDataAsItIs) {
  Communicator& comm = world();
  std::vector<float> data = {1.5f, -2.0f, 3.25f};
  comm.all_reduce_sum(data.data(), 3, DType::f32)->wait();
  EXPECT_EQ(data, (std::vector<float>{1.5f, -2.0f, 3.25f}));
  std::string bytes = "abc";
  comm.broadcast(bytes.data(), 3, 0);
  EXPECT_EQ(bytes, "abc");
  comm.barrier();
  EXPECT_EQ(comm.all_gather("xyz"), std::vector<std::string>{"xyz"});
  EXPECT_TRUE(comm.any(true));
  EXPECT_FALSE(comm.any(false));
  EXPECT_EQ(comm.stats().all_reduces, 0);
}

TEST(DistSingleProcess, ChecksArgumentsAsMpiDoes) {
  Communicator& comm = world();
  uint16_t half = 0;
  EXPECT_THROW(comm.all_reduce_sum(&half, 1, DType::bf16), Error);
  EXPECT_THROW(comm.all_reduce_sum(&half, -1, DType::f32), Error);
  EXPECT_THROW(comm.broadcast(&half, 2, 1), Error);
  EXPECT_THROW(comm.set_timeout(0), Error);
  comm.set_timeout(30);
}

TEST(DistSingleProcess, ThreadsPerProcessIsTheAllowedCpusAtMost) {
  cpu_set_t allowed;
  ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
  EXPECT_EQ(threads_per_process(1024), CPU_COUNT(&allowed));
  EXPECT_EQ(threads_per_process(1), 1);
  EXPECT_EQ(threads_per_process(0), 1);
}

// Runs dist_mpi_check `mode` on `ranks` ranks, ending it after 120 s if it hangs.
testing::CommandResult run_mpi(int ranks, const std::string& mode) {
  return testing::run_command(testing::mpirun(ranks) + " timeout 120 " + DIST_MPI_CHECK + " " +
                              mode);
}

// Skips when mpirun is missing, except on CI, which installs it (scripts/setup.sh).
class DistMpi : public ::testing::Test {
 protected:
  void SetUp() override { KILN_REQUIRE_MPIRUN(); }
};

TEST_F(DistMpi, CollectivesOnTwoRanks) {
  testing::CommandResult result = run_mpi(2, "check");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("dist_mpi_check OK: 2 ranks"), std::string::npos) << result.output;
}

// Three ranks pad the all-reduce to a multiple of 3, and could sum a float in different orders.
TEST_F(DistMpi, CollectivesOnThreeRanks) {
  testing::CommandResult result = run_mpi(3, "check");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("dist_mpi_check OK: 3 ranks"), std::string::npos) << result.output;
}

TEST_F(DistMpi, ACollectiveThatTimesOutEndsTheJob) {
  testing::CommandResult result = run_mpi(2, "timeout");
  EXPECT_NE(result.exit_code, 0) << result.output;
  EXPECT_LT(result.seconds, 15) << result.output;
  EXPECT_NE(result.output.find("[dist] rank 0: a collective (all_reduce of 124 bytes) did not "
                               "finish within 3 s; another rank has died or stopped meeting "
                               "collectives"),
            std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("a later barrier: [dist] rank 0: a collective (all_reduce"),
            std::string::npos)
      << result.output;
}

TEST_F(DistMpi, ARankThatExitsWithAnErrorEndsTheJob) {
  testing::CommandResult result = run_mpi(2, "error_exit");
  EXPECT_NE(result.exit_code, 0) << result.output;
  EXPECT_LT(result.seconds, 15) << result.output;
  EXPECT_NE(result.output.find("rank 0 exits with status 1; aborting the MPI job"),
            std::string::npos)
      << result.output;
}

TEST(DistWorld, WorldSizeWithoutAnMpiLauncherIsAnError) {
  testing::CommandResult result = testing::run_command("env -u OMPI_COMM_WORLD_SIZE -u PMIX_RANK WORLD_SIZE=2 " +
                   std::string(DIST_MPI_CHECK));
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_NE(result.output.find("[dist] WORLD_SIZE=2 was set but the process was not started by an "
                               "MPI launcher: start it with `mpirun -np 2 kiln ...`"),
            std::string::npos)
      << result.output;
}

}  // namespace
}  // namespace kiln::dist
