// TensorBoard event file writer, laid out as transformers' TensorBoardCallback leaves it:
// <output_dir>/runs/<Mon DD_HH-MM-SS>_<hostname>/events.out.tfevents.<time>.<host>.<pid>.0
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kiln {

struct TensorBoardEvent;

// HF's default `logging_dir`: output_dir/runs/<strftime("%b%d_%H-%M-%S")>_<hostname>, local time.
std::string tensorboard_default_logging_dir(const std::string& output_dir);

// HF's rewrite_logs: "eval_x" -> "eval/x", "test_x" -> "test/x", anything else -> "train/x".
std::string tensorboard_tag(std::string_view log_key);

class TensorBoardWriter {
 public:
  // Creates `log_dir` (and parents) and a new event file in it, whose first event carries
  // file_version "brain.Event:2". Throws Error naming the path when it cannot.
  explicit TensorBoardWriter(const std::string& log_dir);
  ~TensorBoardWriter();
  TensorBoardWriter(const TensorBoardWriter&) = delete;
  TensorBoardWriter& operator=(const TensorBoardWriter&) = delete;

  // One event holding one scalar (as torch's SummaryWriter.add_scalar), flushed to the file.
  void add_scalar(std::string_view tag, double value, int64_t step);

  // TensorBoardCallback.on_log: every number in `logs` (an object) under its rewritten tag, at
  // `step`; other values (strings, nulls) are skipped.
  void log(const nlohmann::json& logs, int64_t step);

  const std::string& path() const { return path_; }

 private:
  void write_event(const TensorBoardEvent& event);

  std::string path_;
  std::FILE* file_ = nullptr;
};

}  // namespace kiln
