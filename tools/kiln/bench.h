// What `kiln bench` measures besides the steps themselves: the process and the machine while the
// timed steps ran (as ../shared/bench/peer/bert_torch.py records them, field for field), and
// step-time statistics.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::cli {

// CPU time of the whole machine and of this process at one moment.
struct CpuSample {
  int64_t busy_jiffies = 0, steal_jiffies = 0, total_jiffies = 0;  // /proc/stat's cpu line
  double user_s = 0.0, system_s = 0.0;                              // this process (getrusage)
  double wall_s = 0.0;                                              // a steady clock
};
CpuSample cpu_sample();

// bert_torch.py's load fields between two samples: cpu_busy_pct (system-wide busy % of all CPUs),
// proc_cpu_pct (this process's CPU time as % of all CPUs), cpu_steal_pct and the kernel time per
// step.
struct CpuLoad {
  double busy_pct = 0.0, proc_pct = 0.0, steal_pct = 0.0, sys_s_per_step = 0.0;
};
CpuLoad cpu_load(const CpuSample& before, const CpuSample& after, int64_t steps);

// This process's peak resident memory in MiB (getrusage's ru_maxrss).
double peak_rss_mib();

// "tcmalloc"/"jemalloc" library name when one is loaded (LD_PRELOAD), else "glibc".
std::string malloc_name();

struct StepTimes {
  double mean = 0.0, median = 0.0, min = 0.0, max = 0.0, stdev = 0.0;  // seconds
};
// As Python's statistics module computes them (sample stdev; 0 for one value). Needs values.
StepTimes step_times(std::vector<double> seconds);

}  // namespace kiln::cli
