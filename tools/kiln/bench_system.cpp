// /proc/stat, getrusage and /proc/self/maps readings for `kiln bench`, and step statistics.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <numeric>
#include <sstream>

#include "bench.h"
#include "kiln/ir/error.h"

namespace kiln::cli {
namespace {

double seconds(const timeval& time) {
  return static_cast<double>(time.tv_sec) + static_cast<double>(time.tv_usec) * 1e-6;
}

}  // namespace

CpuSample cpu_sample() {
  CpuSample sample;
  // user nice system idle iowait irq softirq steal: busy excludes idle, iowait and steal.
  std::ifstream stat("/proc/stat");
  std::string label;
  std::vector<int64_t> fields;
  std::string line;
  if (std::getline(stat, line)) {
    std::istringstream words(line);
    words >> label;
    for (int64_t value; fields.size() < 8 && words >> value;) fields.push_back(value);
  }
  if (label == "cpu" && fields.size() >= 5) {
    fields.resize(8, 0);
    sample.total_jiffies = std::accumulate(fields.begin(), fields.end(), int64_t{0});
    sample.steal_jiffies = fields[7];
    sample.busy_jiffies = sample.total_jiffies - fields[3] - fields[4] - fields[7];
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  sample.user_s = seconds(usage.ru_utime);
  sample.system_s = seconds(usage.ru_stime);
  sample.wall_s = std::chrono::duration<double>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count();
  return sample;
}

CpuLoad cpu_load(const CpuSample& before, const CpuSample& after, int64_t steps) {
  CpuLoad load;
  const auto jiffies =
      static_cast<double>(std::max<int64_t>(1, after.total_jiffies - before.total_jiffies));
  load.busy_pct = 100.0 * static_cast<double>(after.busy_jiffies - before.busy_jiffies) / jiffies;
  load.steal_pct =
      100.0 * static_cast<double>(after.steal_jiffies - before.steal_jiffies) / jiffies;
  const double process = (after.user_s - before.user_s) + (after.system_s - before.system_s);
  const double cpus = static_cast<double>(std::max<long>(1, sysconf(_SC_NPROCESSORS_ONLN)));
  load.proc_pct = 100.0 * process / (std::max(after.wall_s - before.wall_s, 1e-9) * cpus);
  load.sys_s_per_step =
      (after.system_s - before.system_s) / static_cast<double>(std::max<int64_t>(1, steps));
  return load;
}

double peak_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // Linux reports KiB
}

std::string malloc_name() {
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    size_t slash = line.rfind('/');
    if (slash == std::string::npos) continue;
    std::string file = line.substr(slash + 1);
    if (file.find("tcmalloc") != std::string::npos || file.find("jemalloc") != std::string::npos) {
      return file;
    }
  }
  return "glibc";
}

StepTimes step_times(std::vector<double> seconds) {
  check(!seconds.empty(), "bench", "no timed steps");
  std::sort(seconds.begin(), seconds.end());
  const size_t n = seconds.size();
  StepTimes times;
  times.min = seconds.front();
  times.max = seconds.back();
  times.median = n % 2 ? seconds[n / 2] : 0.5 * (seconds[n / 2 - 1] + seconds[n / 2]);
  times.mean = std::accumulate(seconds.begin(), seconds.end(), 0.0) / static_cast<double>(n);
  if (n > 1) {
    double squares = 0.0;
    for (double value : seconds) squares += (value - times.mean) * (value - times.mean);
    times.stdev = std::sqrt(squares / static_cast<double>(n - 1));
  }
  return times;
}

}  // namespace kiln::cli
