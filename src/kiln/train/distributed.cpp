// Evaluation outputs gathered across processes, and the all-reduce counters (distributed.h).
#include "kiln/train/distributed.h"

#include <cstring>
#include <sstream>

#include "kiln/ir/error.h"

namespace kiln {
namespace {

// A process's batches as bytes: per batch its loss sum, then per output its rows, each a width
// and that many floats.
class Writer {
 public:
  template <typename T>
  void put(const T& value) {
    bytes_.append(reinterpret_cast<const char*>(&value), sizeof value);
  }
  void put_floats(const std::vector<float>& values) {
    put(static_cast<uint64_t>(values.size()));
    bytes_.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
  }
  std::string take() { return std::move(bytes_); }

 private:
  std::string bytes_;
};

class Reader {
 public:
  explicit Reader(const std::string& bytes) : bytes_(bytes) {}
  template <typename T>
  T get() {
    T value;
    need(sizeof value);
    std::memcpy(&value, bytes_.data() + at_, sizeof value);
    at_ += sizeof value;
    return value;
  }
  std::vector<float> get_floats() {
    std::vector<float> values(get<uint64_t>());
    need(values.size() * sizeof(float));
    std::memcpy(values.data(), bytes_.data() + at_, values.size() * sizeof(float));
    at_ += values.size() * sizeof(float);
    return values;
  }

 private:
  void need(size_t bytes) const {
    check(at_ + bytes <= bytes_.size(), "evaluation", "a process sent truncated outputs");
  }
  const std::string& bytes_;
  size_t at_ = 0;
};

}  // namespace

ForwardOutputs gather_batches(dist::Communicator& world, const std::vector<ForwardOutputs>& mine,
                              size_t batches) {
  Writer writer;
  for (const ForwardOutputs& batch : mine) {
    writer.put(batch.loss_sum);
    writer.put(static_cast<uint64_t>(batch.rows.size()));
    for (const auto& output : batch.rows) {
      writer.put(static_cast<uint64_t>(output.size()));
      for (const std::vector<float>& row : output) writer.put_floats(row);
    }
  }
  std::vector<std::string> sent = world.all_gather(writer.take());
  std::vector<Reader> readers(sent.begin(), sent.end());
  ForwardOutputs out;
  for (size_t b = 0; b < batches; ++b) {
    Reader& reader = readers[b % readers.size()];
    out.loss_sum += reader.get<double>();
    const auto outputs = reader.get<uint64_t>();
    out.rows.resize(outputs);
    for (uint64_t k = 0; k < outputs; ++k) {
      const auto rows = reader.get<uint64_t>();
      for (uint64_t r = 0; r < rows; ++r) out.rows[k].push_back(reader.get_floats());
    }
    ++out.batches;
  }
  return out;
}

std::string all_reduce_summary(const dist::Communicator& world, int64_t steps) {
  if (world.size() == 1 || steps <= 0) return "";
  const dist::CommStats stats = world.stats();
  const auto per_step = static_cast<double>(steps);
  std::ostringstream out;
  out.precision(3);
  out << "; all-reduce over " << world.size() << " processes: "
      << static_cast<double>(stats.all_reduce_bytes) / per_step / 1e6 << " MB and "
      << stats.wait_seconds / per_step * 1e3 << " ms waited per step";
  return out.str();
}

}  // namespace kiln
