// Finite-difference gradient checks against the reference backend.
#include "support/gradcheck.h"

#include <cmath>
#include <sstream>

#include "kiln/autodiff/grad.h"
#include "kiln/backends/reference/reference_backend.h"
#include "support/testing.h"

namespace kiln::testing {
namespace {

Tensor make_argument(const ArgSpec& spec, std::mt19937_64& rng) {
  if (!spec.values.empty()) return Tensor::from_doubles(spec.dtype, spec.shape, spec.values);
  if (is_floating(spec.dtype)) return random_tensor(rng, spec.dtype, spec.shape, spec.low, spec.high);
  return random_integers(rng, spec.dtype, spec.shape, static_cast<int64_t>(spec.low),
                         static_cast<int64_t>(spec.high));
}

std::vector<Value> make_inputs(Graph& graph, const std::vector<ArgSpec>& specs) {
  std::vector<Value> inputs;
  for (size_t i = 0; i < specs.size(); ++i) {
    inputs.push_back(graph.input("arg" + std::to_string(i), specs[i].dtype, specs[i].shape));
  }
  return inputs;
}

}  // namespace

GradCheckResult check_gradients(const std::vector<ArgSpec>& specs, const BuildFn& build,
                                std::mt19937_64& rng, double step, double rtol, double atol) {
  Graph graph;
  std::vector<Value> inputs = make_inputs(graph, specs);
  Value out = build(inputs);
  Tensor weights = random_tensor(rng, out.dtype(), out.shape(), 0.5, 1.5);
  Value loss = reduce_sum(cast(out * constant(graph, weights), DType::f64));

  std::vector<Value> wrt;
  std::vector<size_t> wrt_args;
  for (size_t i = 0; i < specs.size(); ++i) {
    if (specs[i].differentiate && is_floating(specs[i].dtype)) {
      wrt.push_back(inputs[i]);
      wrt_args.push_back(i);
    }
  }
  std::vector<Value> grads = grad(loss, wrt);

  std::vector<Tensor> arguments;
  for (const ArgSpec& spec : specs) arguments.push_back(make_argument(spec, rng));

  auto backend = make_reference_backend();
  std::vector<Value> analytic_outputs = grads;
  auto analytic_program = backend->compile(graph, analytic_outputs);
  auto loss_program = backend->compile(graph, {loss});
  std::vector<Tensor> analytic = analytic_program->run(arguments);

  GradCheckResult result;
  for (size_t w = 0; w < wrt.size(); ++w) {
    Tensor& arg = arguments[wrt_args[w]];
    for (int64_t i = 0; i < arg.numel(); ++i) {
      double original = arg.get(i);
      arg.set(i, original + step);
      double plus = loss_program->run(arguments)[0].get(0);
      arg.set(i, original - step);
      double minus = loss_program->run(arguments)[0].get(0);
      arg.set(i, original);
      double numeric = (plus - minus) / (2 * step);
      double exact = analytic[w].get(i);
      ++result.checked;
      if (!(std::fabs(exact - numeric) <= atol + rtol * std::fabs(numeric))) {
        std::ostringstream message;
        message.precision(12);
        message << "argument " << wrt_args[w] << " " << shape_str(arg.shape()) << " element " << i
                << ": analytic " << exact << " vs numeric " << numeric;
        result.ok = false;
        result.message = message.str();
        return result;
      }
    }
  }
  return result;
}

std::vector<OpKind> ops_built(const std::vector<ArgSpec>& specs, const BuildFn& build) {
  Graph graph;
  Value out = build(make_inputs(graph, specs));
  std::vector<OpKind> kinds;
  for (int32_t id : live_nodes(graph, {out})) kinds.push_back(graph.node(id).op);
  return kinds;
}

}  // namespace kiln::testing
