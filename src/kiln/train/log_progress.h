// Console progress for training, evaluation and prediction: step/total, loss, learning rate,
// tokens/s and ETA, redrawn in place on a terminal and printed as plain lines every logging_steps
// (and at least every 30 s) otherwise (log files, CI). Speed and ETA come from steady-state steps
// only: not the first (which compiles) nor any interval that held a compile, an evaluation or a
// checkpoint.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

namespace kiln {

struct ProgressSnapshot {
  std::string_view unit = "step";  // what is counted: "step", "evaluating batch", ...
  int64_t step = 0;
  int64_t total_steps = 0;
  std::optional<double> loss;
  std::optional<double> learning_rate;
  std::optional<double> tokens_per_second;
  double elapsed_seconds = 0.0;
  std::optional<double> eta_seconds;
};

// "step 10/375 (2%) | loss 0.6931 | lr 4.87e-05 | 1234 tok/s | elapsed 00:05 | ETA 03:02" (the
// unit in place of "step");
// unknown values are left out, and times under an hour are MM:SS, H:MM:SS past that.
std::string format_progress(const ProgressSnapshot& snapshot);

class ProgressBar {
 public:
  // Seconds on a monotonic clock; tests pass a fake one.
  using Clock = std::function<double()>;

  // A bar for steps first_step+1 .. total_steps (first_step > 0 when resuming, so that speeds
  // count only this run's steps). `tty` picks in-place redraws; see stderr_is_tty. `unit` names
  // what a step is in the line.
  ProgressBar(int64_t total_steps, int64_t first_step, int64_t logging_steps, std::ostream& out,
              bool tty, Clock clock = {}, std::string unit = "step");

  static bool stderr_is_tty();

  // Step `step` is done, having processed `tokens` input tokens; loss and learning rate are the
  // latest known (nullopt keeps the previous ones). On a terminal the line is redrawn (at most
  // ten times a second, and always for the last step); otherwise a line is printed when step is
  // a multiple of logging_steps, the last step, or 30 s after the previous line.
  void update(int64_t step, int64_t tokens, std::optional<double> loss,
              std::optional<double> learning_rate);

  // The time since the last update (up to the next one) holds a pause: a compile, an
  // evaluation, a checkpoint. It is left out of the speed and the ETA.
  void exclude_interval();

  // Prints `line` above the bar (evaluation results, warnings) without garbling it.
  void message(std::string_view line);

  // Ends the bar's line on a terminal.
  void finish();
  // Erases the bar's line on a terminal (a bar shown only while it runs, as evaluation's).
  void clear();

 private:
  ProgressSnapshot snapshot() const;
  void draw();

  int64_t total_steps_;
  int64_t logging_steps_;
  std::ostream& out_;
  bool tty_;
  Clock clock_;
  std::string unit_;
  double start_;
  double last_draw_ = -1.0;  // a terminal's last redraw, or the last plain line
  int64_t step_;
  // Steady-state time: the intervals between updates that held no pause.
  double last_update_;
  bool interval_excluded_ = true;  // the first interval holds the first compile
  double steady_seconds_ = 0.0;
  int64_t steady_steps_ = 0;
  int64_t steady_tokens_ = 0;
  std::optional<double> loss_;
  std::optional<double> learning_rate_;
  bool drawn_ = false;
};

}  // namespace kiln
