// Graceful stops: SIGINT and SIGTERM ask a training run to finish its current step, save a
// checkpoint and return (the Trainer polls stop_signal() after every optimizer step).
#pragma once

namespace kiln {

// Installs handlers for SIGINT and SIGTERM that record the signal. Each handler resets itself
// on delivery, so a second Ctrl-C ends the process at once, as it would without Kiln.
void install_stop_signal_handlers();

// The first SIGINT or SIGTERM received since the handlers were installed, or 0.
int stop_signal();

}  // namespace kiln
