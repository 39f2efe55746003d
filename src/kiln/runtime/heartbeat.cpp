#include "kiln/runtime/heartbeat.h"

#include <chrono>

namespace kiln {

Heartbeat::Heartbeat(double interval_seconds, std::function<void(double)> beat)
    : beat_(std::move(beat)), thread_([this, interval_seconds] { run(interval_seconds); }) {}

Heartbeat::~Heartbeat() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  stopped_.notify_one();
  thread_.join();
}

void Heartbeat::run(double interval_seconds) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  const auto interval = std::chrono::duration<double>(interval_seconds);
  std::unique_lock<std::mutex> lock(mutex_);
  for (int64_t beats = 1;; ++beats) {
    const auto due = start + std::chrono::duration_cast<Clock::duration>(interval * beats);
    if (stopped_.wait_until(lock, due, [this] { return stop_; })) return;
    lock.unlock();
    beat_(std::chrono::duration<double>(Clock::now() - start).count());
    lock.lock();
  }
}

}  // namespace kiln
