// TensorBoardWriter: event file naming, HF's tag rewriting, one flushed record per scalar.
#include "kiln/train/tensorboard_writer.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "kiln/ir/error.h"
#include "kiln/train/tensorboard_event.h"

namespace kiln {
namespace {

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "localhost";
  return name;
}

double now_seconds() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

}  // namespace

std::string tensorboard_default_logging_dir(const std::string& output_dir) {
  // Month names spelled out here: strftime's %b follows the locale.
  static const char* const kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                        "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  std::time_t now = std::time(nullptr);
  std::tm local{};
  ::localtime_r(&now, &local);
  char stamp[32];
  std::snprintf(stamp, sizeof stamp, "%s%02d_%02d-%02d-%02d", kMonths[local.tm_mon], local.tm_mday,
                local.tm_hour, local.tm_min, local.tm_sec);
  return (std::filesystem::path(output_dir) / "runs" / (std::string(stamp) + "_" + host_name()))
      .string();
}

std::string tensorboard_tag(std::string_view log_key) {
  if (log_key.starts_with("eval_")) return "eval/" + std::string(log_key.substr(5));
  if (log_key.starts_with("test_")) return "test/" + std::string(log_key.substr(5));
  return "train/" + std::string(log_key);
}

TensorBoardWriter::TensorBoardWriter(const std::string& log_dir) {
  std::error_code error;
  std::filesystem::create_directories(log_dir, error);
  check(!error, log_dir, "cannot create the TensorBoard log folder: ", error.message());
  char name[512];
  std::snprintf(name, sizeof name, "events.out.tfevents.%010lld.%s.%d.0",
                static_cast<long long>(std::time(nullptr)), host_name().c_str(),
                static_cast<int>(::getpid()));
  path_ = (std::filesystem::path(log_dir) / name).string();
  // Append: a second writer in the same second and process must not erase the first's events.
  file_ = std::fopen(path_.c_str(), "ab");
  check(file_ != nullptr, path_, "cannot create event file: ", std::strerror(errno));
  TensorBoardEvent first;
  first.wall_time = now_seconds();
  first.file_version = "brain.Event:2";
  first.source_writer = "kiln";
  write_event(first);
}

TensorBoardWriter::~TensorBoardWriter() {
  if (file_ != nullptr) std::fclose(file_);
}

void TensorBoardWriter::add_scalar(std::string_view tag, double value, int64_t step) {
  TensorBoardEvent event;
  event.wall_time = now_seconds();
  event.step = step;
  event.scalars.push_back({std::string(tag), static_cast<float>(value)});
  write_event(event);
}

void TensorBoardWriter::log(const nlohmann::json& logs, int64_t step) {
  check(logs.is_object(), path_, "TensorBoard logs must be a JSON object, got ", logs.type_name());
  for (const auto& [key, value] : logs.items()) {
    if (value.is_number()) add_scalar(tensorboard_tag(key), value.get<double>(), step);
  }
}

void TensorBoardWriter::write_event(const TensorBoardEvent& event) {
  std::string record = tfrecord_frame(tensorboard_encode_event(event));
  bool written = std::fwrite(record.data(), 1, record.size(), file_) == record.size();
  check(written && std::fflush(file_) == 0, path_, "cannot write event: ", std::strerror(errno));
}

}  // namespace kiln
