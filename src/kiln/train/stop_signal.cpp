// SIGINT/SIGTERM handlers that only record the signal; everything else happens in the Trainer.
#include "kiln/train/stop_signal.h"

#include <signal.h>

#include <atomic>

namespace kiln {
namespace {

std::atomic<int> received{0};

void record(int signal_number) {
  int none = 0;
  received.compare_exchange_strong(none, signal_number);
}

}  // namespace

void install_stop_signal_handlers() {
  struct sigaction action {};
  action.sa_handler = record;
  sigemptyset(&action.sa_mask);
  // SA_RESTART: a write or fsync interrupted by the signal carries on instead of failing.
  action.sa_flags = SA_RESTART | SA_RESETHAND;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

int stop_signal() { return received.load(); }

}  // namespace kiln
