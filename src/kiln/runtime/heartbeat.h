// A sign of life during one long blocking call (a compile that takes minutes): a thread of its
// own calls `beat` every `interval_seconds` until the Heartbeat is destroyed, so that a log
// read by a person or a CI job's watchdog does not fall silent.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace kiln {

class Heartbeat {
 public:
  // `beat` receives the seconds since construction; it runs on the heartbeat's thread while the
  // constructing thread is busy, so it must not touch what that thread uses unguarded.
  Heartbeat(double interval_seconds, std::function<void(double)> beat);
  // Stops the thread; a beat in progress finishes first.
  ~Heartbeat();
  Heartbeat(const Heartbeat&) = delete;
  Heartbeat& operator=(const Heartbeat&) = delete;

 private:
  void run(double interval_seconds);

  std::function<void(double)> beat_;
  std::mutex mutex_;
  std::condition_variable stopped_;
  bool stop_ = false;
  std::thread thread_;  // last: it starts once the members above exist
};

}  // namespace kiln
