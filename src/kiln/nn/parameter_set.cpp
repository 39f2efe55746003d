// ParameterSet: registration, initialisation by HF's rules, and loading by state-dict name.
#include "kiln/nn/parameter_set.h"

#include <algorithm>
#include <cmath>
#include <exception>

#include "kiln/ir/error.h"
#include "kiln/nn/init.h"

namespace kiln {
namespace {

std::string join_names(const std::vector<std::string>& names) {
  std::string out = "[";
  for (size_t i = 0; i < names.size(); ++i) out += (i ? ", " : "") + names[i];
  return out + "]";
}

Tensor initial_value(const Parameter& param, int64_t seed, uint32_t stream) {
  DType dtype = param.value.dtype();
  const Shape& shape = param.value.shape();
  switch (param.init.kind) {
    case ParameterInit::Kind::zeros:
      return Tensor(dtype, shape);
    case ParameterInit::Kind::ones: {
      Tensor out(dtype, shape);
      for (int64_t i = 0; i < out.numel(); ++i) out.set(i, 1.0);
      return out;
    }
    case ParameterInit::Kind::normal: {
      Tensor out = init_normal(dtype, shape, param.init.stddev, seed, stream);
      if (param.init.zero_row) {
        int64_t row = *param.init.zero_row;
        check(shape.size() == 2 && row >= 0 && row < shape[0], "initialize", "parameter '",
              param.name, "' ", shape_str(shape), " has no row ", row);
        for (int64_t j = 0; j < shape[1]; ++j) out.set(row * shape[1] + j, 0.0);
      }
      return out;
    }
    case ParameterInit::Kind::sinusoidal: {
      check(shape.size() == 2, "initialize", "parameter '", param.name, "' ", shape_str(shape),
            " is no [positions, dim] table");
      Tensor out(dtype, shape);
      const auto dim = static_cast<double>(shape[1]);
      for (int64_t pos = 0; pos < shape[0]; ++pos) {
        for (int64_t j = 0; j < shape[1]; ++j) {
          double angle = static_cast<double>(pos) /
                         std::pow(10000.0, static_cast<double>(2 * (j / 2)) / dim);
          out.set(pos * shape[1] + j, j % 2 == 0 ? std::sin(angle) : std::cos(angle));
        }
      }
      return out;
    }
  }
  fail("initialize", "parameter '", param.name, "': unknown init kind");
}

const Tensor& current_value(const Parameter& param) {
  check(param.tensor.nbytes() > 0 || param.value.numel() == 0, "parameters", "parameter '",
        param.name, "' has no value (call initialize() or load())");
  return param.tensor;
}

}  // namespace

ParameterSet::ParameterSet(Graph& graph, DType dtype) : graph_(&graph), dtype_(dtype) {
  check(is_floating(dtype), "parameters", "parameters must be floating, not ", dtype_name(dtype));
}

Value ParameterSet::add(const std::string& name, const Shape& shape, ParameterInit init,
                        bool decay) {
  check(!index_.contains(name), "parameters", "parameter '", name, "' registered twice");
  Value value = graph_->input(name, dtype_, shape, InputRole::weight);
  index_.emplace(name, params_.size());
  params_.push_back(Parameter{name, value, init, decay, Tensor()});
  return value;
}

const Parameter& ParameterSet::get(std::string_view name) const {
  auto found = index_.find(name);
  check(found != index_.end(), "parameters", "no parameter '", name, "'");
  return params_[found->second];
}

std::vector<std::string> ParameterSet::names() const {
  std::vector<std::string> out;
  for (const Parameter& param : params_) out.push_back(param.name);
  return out;
}

std::vector<Value> ParameterSet::values() const {
  std::vector<Value> out;
  for (const Parameter& param : params_) out.push_back(param.value);
  return out;
}

std::vector<bool> ParameterSet::decay_flags() const {
  std::vector<bool> out;
  for (const Parameter& param : params_) out.push_back(param.decay);
  return out;
}

std::vector<Tensor> ParameterSet::tensors() const {
  std::vector<Tensor> out;
  for (const Parameter& param : params_) out.push_back(current_value(param));
  return out;
}

int64_t ParameterSet::numel() const {
  int64_t total = 0;
  for (const Parameter& param : params_) total += param.value.numel();
  return total;
}

// A parameter's values depend only on the seed and its index, so the parameters are drawn on
// every OpenMP thread at once (the kernels' count: OMP_NUM_THREADS, `kiln bench --threads`), each
// thread also taking the page faults of the tensors it fills. The first failure by index is
// thrown, as the loop in order would have.
void ParameterSet::initialize(int64_t seed) {
  std::vector<std::exception_ptr> failures(params_.size());
  auto count = static_cast<int64_t>(params_.size());
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t i = 0; i < count; ++i) {
    Parameter& param = params_[static_cast<size_t>(i)];
    if (param.tensor.nbytes() != 0) continue;
    try {
      param.tensor = initial_value(param, seed, static_cast<uint32_t>(i));
    } catch (...) {
      failures[static_cast<size_t>(i)] = std::current_exception();
    }
  }
  for (const std::exception_ptr& failure : failures) {
    if (failure) std::rethrow_exception(failure);
  }
}

LoadReport ParameterSet::load(const std::map<std::string, Tensor>& tensors, std::string_view where,
                              bool strict) {
  LoadReport report;
  for (const auto& [name, tensor] : tensors) {
    if (!index_.contains(name)) report.unexpected.push_back(name);
  }
  for (const Parameter& param : params_) {
    if (!tensors.contains(param.name)) report.missing.push_back(param.name);
  }
  std::sort(report.missing.begin(), report.missing.end());
  if (strict && (!report.missing.empty() || !report.unexpected.empty())) {
    fail(where, "weights do not match the model: ", report.missing.size(), " missing ",
         join_names(report.missing), "; ", report.unexpected.size(), " unexpected ",
         join_names(report.unexpected));
  }
  // Check every tensor before taking any, so that a failed load changes nothing.
  for (const auto& [name, tensor] : tensors) {
    auto found = index_.find(name);
    if (found == index_.end()) continue;
    const Parameter& param = params_[found->second];
    check(tensor.shape() == param.value.shape(), where, "tensor '", name, "': shape ",
          shape_str(tensor.shape()), " in the weights, ", shape_str(param.value.shape()),
          " in the model");
    check(is_floating(tensor.dtype()), where, "tensor '", name, "': dtype ",
          dtype_name(tensor.dtype()), " is not floating");
  }
  for (const auto& [name, tensor] : tensors) {
    auto found = index_.find(name);
    if (found == index_.end()) continue;
    Parameter& param = params_[found->second];
    param.tensor =
        tensor.dtype() == param.value.dtype() ? tensor : tensor.cast(param.value.dtype());
  }
  return report;
}

std::vector<Tensor> ParameterSet::arguments(const std::map<std::string, Tensor>& feeds) const {
  std::vector<Tensor> out;
  for (int32_t id : graph_->inputs()) {
    const std::string& name = graph_->input_name(id);
    if (auto found = index_.find(name); found != index_.end()) {
      out.push_back(current_value(params_[found->second]));
    } else {
      auto feed = feeds.find(name);
      check(feed != feeds.end(), "parameters", "no feed for graph input '", name, "'");
      out.push_back(feed->second);
    }
  }
  return out;
}

std::map<std::string, Tensor> ParameterSet::state_dict() const {
  std::vector<Tensor> values = tensors();
  std::map<std::string, Tensor> out;
  for (size_t i = 0; i < params_.size(); ++i) out.emplace(params_[i].name, values[i]);
  return out;
}

void ParameterSet::set_tensors(const std::vector<Tensor>& values) {
  check(values.size() == params_.size(), "parameters", values.size(), " values for ",
        params_.size(), " parameters");
  for (size_t i = 0; i < values.size(); ++i) {
    const Value& value = params_[i].value;
    check(values[i].shape() == value.shape() && values[i].dtype() == value.dtype(), "parameters",
          "parameter '", params_[i].name, "': value ", dtype_name(values[i].dtype()),
          shape_str(values[i].shape()), " for ", dtype_name(value.dtype()),
          shape_str(value.shape()));
  }
  for (size_t i = 0; i < values.size(); ++i) params_[i].tensor = values[i];
}

}  // namespace kiln
