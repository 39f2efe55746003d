// Console progress for training: step/total, loss, learning rate, tokens/s and ETA, redrawn in
// place on a terminal and printed as plain lines every logging_steps otherwise (log files, CI).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

namespace kiln {

struct ProgressSnapshot {
  int64_t step = 0;
  int64_t total_steps = 0;
  std::optional<double> loss;
  std::optional<double> learning_rate;
  std::optional<double> tokens_per_second;
  double elapsed_seconds = 0.0;
  std::optional<double> eta_seconds;
};

// "step 10/375 (2%) | loss 0.6931 | lr 4.87e-05 | 1234 tok/s | elapsed 00:05 | ETA 03:02";
// unknown values are left out, and times under an hour are MM:SS, H:MM:SS past that.
std::string format_progress(const ProgressSnapshot& snapshot);

class ProgressBar {
 public:
  // Seconds on a monotonic clock; tests pass a fake one.
  using Clock = std::function<double()>;

  // A bar for steps first_step+1 .. total_steps (first_step > 0 when resuming, so that speeds
  // count only this run's steps). `tty` picks in-place redraws; see stderr_is_tty.
  ProgressBar(int64_t total_steps, int64_t first_step, int64_t logging_steps, std::ostream& out,
              bool tty, Clock clock = {});

  static bool stderr_is_tty();

  // Step `step` is done, having processed `tokens` input tokens; loss and learning rate are the
  // latest known (nullopt keeps the previous ones). On a terminal the line is redrawn (at most
  // ten times a second, and always for the last step); otherwise a line is printed when step is
  // a multiple of logging_steps or the last step.
  void update(int64_t step, int64_t tokens, std::optional<double> loss,
              std::optional<double> learning_rate);

  // Prints `line` above the bar (evaluation results, warnings) without garbling it.
  void message(std::string_view line);

  // Ends the bar's line on a terminal.
  void finish();

 private:
  ProgressSnapshot snapshot() const;
  void draw();

  int64_t total_steps_;
  int64_t first_step_;
  int64_t logging_steps_;
  std::ostream& out_;
  bool tty_;
  Clock clock_;
  double start_;
  double last_draw_ = -1.0;
  int64_t step_;
  int64_t tokens_ = 0;
  std::optional<double> loss_;
  std::optional<double> learning_rate_;
  bool drawn_ = false;
};

}  // namespace kiln
