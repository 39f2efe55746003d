// ProgressBar: formatting, rate and ETA, TTY redraws versus plain periodic lines.
#include "kiln/train/log_progress.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <utility>

#include "kiln/ir/error.h"

namespace kiln {
namespace {

std::string clock_text(double seconds) {
  auto total = static_cast<int64_t>(std::max(0.0, seconds));
  char text[48];
  if (total < 3600) {
    std::snprintf(text, sizeof text, "%02lld:%02lld", static_cast<long long>(total / 60),
                  static_cast<long long>(total % 60));
  } else {
    std::snprintf(text, sizeof text, "%lld:%02lld:%02lld", static_cast<long long>(total / 3600),
                  static_cast<long long>(total / 60 % 60), static_cast<long long>(total % 60));
  }
  return text;
}

double steady_seconds() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

constexpr int kBarWidth = 20;
constexpr double kRedrawSeconds = 0.1;
constexpr double kPlainLineSeconds = 30.0;  // the longest silence of a log that is not a terminal

}  // namespace

std::string format_progress(const ProgressSnapshot& s) {
  char text[128];
  int64_t percent = s.total_steps > 0 ? s.step * 100 / s.total_steps : 0;
  std::snprintf(text, sizeof text, " %lld/%lld (%lld%%)", static_cast<long long>(s.step),
                static_cast<long long>(s.total_steps), static_cast<long long>(percent));
  std::string out = std::string(s.unit) + text;
  if (s.loss) {
    std::snprintf(text, sizeof text, " | loss %.4f", *s.loss);
    out += text;
  }
  if (s.learning_rate) {
    std::snprintf(text, sizeof text, " | lr %.2e", *s.learning_rate);
    out += text;
  }
  if (s.tokens_per_second) {
    std::snprintf(text, sizeof text, " | %.0f tok/s", *s.tokens_per_second);
    out += text;
  }
  out += " | elapsed " + clock_text(s.elapsed_seconds);
  out += " | ETA " + (s.eta_seconds ? clock_text(*s.eta_seconds) : std::string("?"));
  return out;
}

ProgressBar::ProgressBar(int64_t total_steps, int64_t first_step, int64_t logging_steps,
                         std::ostream& out, bool tty, Clock clock, std::string unit)
    : total_steps_(total_steps),
      logging_steps_(logging_steps),
      out_(out),
      tty_(tty),
      clock_(clock ? std::move(clock) : Clock(steady_seconds)),
      unit_(std::move(unit)),
      start_(clock_()),
      step_(first_step),
      last_update_(start_) {
  check(logging_steps > 0, "progress", "logging_steps must be positive, got ", logging_steps);
  check(first_step >= 0 && first_step <= total_steps, "progress", "first step ", first_step,
        " outside 0..", total_steps);
}

bool ProgressBar::stderr_is_tty() { return ::isatty(STDERR_FILENO) == 1; }

ProgressSnapshot ProgressBar::snapshot() const {
  ProgressSnapshot s;
  s.unit = unit_;
  s.step = step_;
  s.total_steps = total_steps_;
  s.loss = loss_;
  s.learning_rate = learning_rate_;
  s.elapsed_seconds = clock_() - start_;
  if (steady_steps_ > 0 && steady_seconds_ > 0) {
    if (steady_tokens_ > 0) {
      s.tokens_per_second = static_cast<double>(steady_tokens_) / steady_seconds_;
    }
    s.eta_seconds = steady_seconds_ / static_cast<double>(steady_steps_) *
                    static_cast<double>(total_steps_ - step_);
  } else if (step_ == total_steps_) {
    s.eta_seconds = 0.0;
  }
  return s;
}

void ProgressBar::update(int64_t step, int64_t tokens, std::optional<double> loss,
                         std::optional<double> learning_rate) {
  const double now = clock_();
  if (!interval_excluded_) {
    steady_seconds_ += now - last_update_;
    steady_steps_ += step - step_;
    steady_tokens_ += tokens;
  }
  interval_excluded_ = false;
  last_update_ = now;
  step_ = step;
  if (loss) loss_ = loss;
  if (learning_rate) learning_rate_ = learning_rate;
  const bool last = step == total_steps_;
  if (tty_) {
    if (last || last_draw_ < 0 || now - last_draw_ >= kRedrawSeconds) {
      last_draw_ = now;
      draw();
    }
  } else if (step % logging_steps_ == 0 || last ||
             now - (last_draw_ < 0 ? start_ : last_draw_) >= kPlainLineSeconds) {
    last_draw_ = now;
    out_ << format_progress(snapshot()) << '\n' << std::flush;
  }
}

void ProgressBar::exclude_interval() { interval_excluded_ = true; }

void ProgressBar::draw() {
  int64_t filled = total_steps_ > 0 ? step_ * kBarWidth / total_steps_ : 0;
  std::string bar = "[" + std::string(static_cast<size_t>(filled), '#') +
                    std::string(static_cast<size_t>(kBarWidth - filled), '-') + "] ";
  // \r back to the line start, \x1b[K erases what a longer previous line left behind.
  out_ << '\r' << bar << format_progress(snapshot()) << "\x1b[K" << std::flush;
  drawn_ = true;
}

void ProgressBar::message(std::string_view line) {
  if (tty_ && drawn_) {
    out_ << "\r\x1b[K" << line << '\n';
    draw();
  } else {
    out_ << line << '\n' << std::flush;
  }
}

void ProgressBar::finish() {
  if (tty_ && drawn_) out_ << '\n' << std::flush;
  drawn_ = false;
}

void ProgressBar::clear() {
  if (tty_ && drawn_) out_ << "\r\x1b[K" << std::flush;
  drawn_ = false;
}

}  // namespace kiln
