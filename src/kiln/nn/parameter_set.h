// Named model parameters: graph inputs (role weight) keyed by their Hugging Face state-dict names,
// with how to initialise them, whether they get weight decay, and their current values.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/ir/graph.h"

namespace kiln {

// How `initialize` fills a parameter (Hugging Face's `_init_weights` rules).
struct ParameterInit {
  // sinusoidal: transformers' create_sinusoidal_embeddings table [positions, dim]: row p, column
  // j holds sin (even j) or cos (odd j) of p / 10000^(2 (j / 2) / dim).
  enum class Kind : uint8_t { zeros, ones, normal, sinusoidal };
  Kind kind = Kind::zeros;
  double stddev = 0.0;              // normal only
  std::optional<int64_t> zero_row;  // normal only: an embedding's padding_idx row is zero

  static ParameterInit zeros() { return {Kind::zeros, 0.0, std::nullopt}; }
  static ParameterInit ones() { return {Kind::ones, 0.0, std::nullopt}; }
  static ParameterInit normal(double stddev, std::optional<int64_t> zero_row = std::nullopt) {
    return {Kind::normal, stddev, zero_row};
  }
  static ParameterInit sinusoidal() { return {Kind::sinusoidal, 0.0, std::nullopt}; }
};

struct Parameter {
  std::string name;  // e.g. "bert.encoder.layer.0.attention.self.query.weight"
  Value value;       // the graph input
  ParameterInit init;
  bool decay = true;  // false for biases and LayerNorm parameters, as HF Trainer decides
  Tensor tensor;      // current value; empty until initialize() or load()
};

// What load() found besides the tensors it used (names sorted).
struct LoadReport {
  std::vector<std::string> missing;     // parameters the map lacks
  std::vector<std::string> unexpected;  // map entries that are no parameter
};

class ParameterSet {
 public:
  // The parameters of one model share a floating dtype (master weights).
  explicit ParameterSet(Graph& graph, DType dtype = DType::f32);

  Graph& graph() const { return *graph_; }
  DType dtype() const { return dtype_; }

  // Adds a graph input `name` (role weight) of dtype(). Names are unique.
  Value add(const std::string& name, const Shape& shape, ParameterInit init, bool decay);

  // In registration order (= graph input order among the parameters).
  const std::vector<Parameter>& parameters() const { return params_; }
  size_t size() const { return params_.size(); }
  bool contains(std::string_view name) const { return index_.contains(name); }
  // Throws naming the parameter when absent.
  const Parameter& get(std::string_view name) const;
  std::vector<std::string> names() const;
  std::vector<Value> values() const;
  std::vector<bool> decay_flags() const;
  // Current values in registration order; throws naming the first parameter without one.
  std::vector<Tensor> tensors() const;
  // Number of scalar weights.
  int64_t numel() const;

  // Fills every parameter that has no value yet by its init rule. Parameter i draws Philox
  // stream i of `seed`, so its values do not depend on which others were loaded, nor on the
  // threads that draw them. Throws the first failing parameter's error (by index).
  void initialize(int64_t seed);

  // Takes values from `tensors` by name (floating tensors are converted to the parameter's
  // dtype). A shape or dtype mismatch is an Error naming the tensor. When `strict`, missing or
  // unexpected names are an Error listing both; otherwise they are reported and the missing
  // parameters keep their values (initialize() fills those still empty).
  LoadReport load(const std::map<std::string, Tensor>& tensors, std::string_view where,
                  bool strict = true);

  // Arguments for a backend in the graph's input order: the current values of the parameters and,
  // for every other input, the feed of that name (an Error names a missing one).
  std::vector<Tensor> arguments(const std::map<std::string, Tensor>& feeds) const;

  // Name -> current value, for saving.
  std::map<std::string, Tensor> state_dict() const;
  // Replaces every value, in registration order (e.g. TrainStep::parameters() after training);
  // shapes and dtypes must match.
  void set_tensors(const std::vector<Tensor>& values);

 private:
  Graph* graph_;
  DType dtype_;
  std::vector<Parameter> params_;
  std::map<std::string, size_t, std::less<>> index_;
};

}  // namespace kiln
