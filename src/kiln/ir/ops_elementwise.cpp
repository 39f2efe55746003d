// Elementwise builders (unary, and binary with numpy broadcasting) and their VJP rules.
#include <cmath>
#include <numbers>

#include "kiln/ir/error.h"
#include "kiln/ir/op_rules.h"
#include "kiln/ir/ops.h"
#include "kiln/ir/ops_internal.h"

namespace kiln {
namespace {

enum class Accepts { floating, numeric, boolean };

void check_accepts(const Value& x, std::string_view where, Accepts accepts) {
  switch (accepts) {
    case Accepts::floating:
      detail::check_floating(x, where);
      return;
    case Accepts::numeric:
      detail::check_numeric(x, where);
      return;
    case Accepts::boolean:
      check(x.dtype() == DType::boolean, where, "needs bool, got ", dtype_name(x.dtype()));
      return;
  }
}

Value unary(OpKind op, Accepts accepts, Value x) {
  std::string_view where = op_name(op);
  detail::check_operands({x}, where);
  check_accepts(x, where, accepts);
  return x.graph().add_node(op, {x}, NoAttrs{}, x.dtype(), x.shape());
}

Value binary(OpKind op, Accepts accepts, Value a, Value b) {
  std::string_view where = op_name(op);
  detail::check_operands({a, b}, where);
  detail::check_same_dtype(a, b, where);
  check_accepts(a, where, accepts);
  std::vector<Value> operands = detail::broadcast_operands({a, b}, where);
  return a.graph().add_node(op, operands, NoAttrs{}, a.dtype(), operands[0].shape());
}

}  // namespace

Value neg(Value x) { return unary(OpKind::neg, Accepts::numeric, x); }
Value abs(Value x) { return unary(OpKind::abs, Accepts::numeric, x); }
Value sign(Value x) { return unary(OpKind::sign, Accepts::numeric, x); }
Value exp(Value x) { return unary(OpKind::exp, Accepts::floating, x); }
Value log(Value x) { return unary(OpKind::log, Accepts::floating, x); }
Value tanh(Value x) { return unary(OpKind::tanh, Accepts::floating, x); }
Value logistic(Value x) { return unary(OpKind::logistic, Accepts::floating, x); }
Value sqrt(Value x) { return unary(OpKind::sqrt, Accepts::floating, x); }
Value rsqrt(Value x) { return unary(OpKind::rsqrt, Accepts::floating, x); }
Value erf(Value x) { return unary(OpKind::erf, Accepts::floating, x); }
Value logical_not(Value x) { return unary(OpKind::logical_not, Accepts::boolean, x); }

Value add(Value a, Value b) { return binary(OpKind::add, Accepts::numeric, a, b); }
Value sub(Value a, Value b) { return binary(OpKind::sub, Accepts::numeric, a, b); }
Value mul(Value a, Value b) { return binary(OpKind::mul, Accepts::numeric, a, b); }
Value div(Value a, Value b) { return binary(OpKind::div, Accepts::numeric, a, b); }
Value max(Value a, Value b) { return binary(OpKind::max, Accepts::numeric, a, b); }
Value min(Value a, Value b) { return binary(OpKind::min, Accepts::numeric, a, b); }
Value pow(Value a, Value b) { return binary(OpKind::pow, Accepts::numeric, a, b); }
Value logical_and(Value a, Value b) { return binary(OpKind::logical_and, Accepts::boolean, a, b); }
Value logical_or(Value a, Value b) { return binary(OpKind::logical_or, Accepts::boolean, a, b); }

Value operator+(Value a, Value b) { return add(a, b); }
Value operator-(Value a, Value b) { return sub(a, b); }
Value operator*(Value a, Value b) { return mul(a, b); }
Value operator/(Value a, Value b) { return div(a, b); }
Value operator-(Value x) { return neg(x); }
Value operator+(Value a, double b) { return add(a, scalar_like(a, b)); }
Value operator-(Value a, double b) { return sub(a, scalar_like(a, b)); }
Value operator*(Value a, double b) { return mul(a, scalar_like(a, b)); }
Value operator/(Value a, double b) { return div(a, scalar_like(a, b)); }
Value operator+(double a, Value b) { return add(scalar_like(b, a), b); }
Value operator-(double a, Value b) { return sub(scalar_like(b, a), b); }
Value operator*(double a, Value b) { return mul(scalar_like(b, a), b); }
Value operator/(double a, Value b) { return div(scalar_like(b, a), b); }
Value pow(Value a, double exponent) { return pow(a, scalar_like(a, exponent)); }

// ---- VJP rules: cotangents have the operands' (equal) shapes; broadcasting is undone by the
// broadcast op's own rule. Integer and bool values carry no gradient. ----
namespace rules {
namespace {

bool differentiable(const VjpArgs& args) { return is_floating(args.output.dtype()); }

// g where `take` holds, half of g where the operands tie, zero elsewhere.
Value tie_split(Value take, Value tie, Value g) {
  Value zero = scalar_like(g, 0.0);
  return select(take, g, select(tie, g * 0.5, zero));
}

}  // namespace

std::vector<Value> vjp_neg(const VjpArgs& args) {
  if (!differentiable(args)) return {Value()};
  return {-args.cotangent};
}

std::vector<Value> vjp_abs(const VjpArgs& args) {
  if (!differentiable(args)) return {Value()};
  return {args.cotangent * sign(args.inputs[0])};
}

std::vector<Value> vjp_sign(const VjpArgs& args) {
  if (!differentiable(args)) return {Value()};
  return {zeros_like(args.inputs[0])};
}

std::vector<Value> vjp_exp(const VjpArgs& args) { return {args.cotangent * args.output}; }

std::vector<Value> vjp_log(const VjpArgs& args) { return {args.cotangent / args.inputs[0]}; }

std::vector<Value> vjp_tanh(const VjpArgs& args) {
  Value y = args.output;
  return {args.cotangent * (1.0 - y * y)};
}

std::vector<Value> vjp_logistic(const VjpArgs& args) {
  Value y = args.output;
  return {args.cotangent * (y * (1.0 - y))};
}

std::vector<Value> vjp_sqrt(const VjpArgs& args) { return {args.cotangent * 0.5 / args.output}; }

// d/dx x^(-1/2) = -1/2 x^(-3/2) = -1/2 y^3
std::vector<Value> vjp_rsqrt(const VjpArgs& args) {
  Value y = args.output;
  return {args.cotangent * (-0.5) * (y * y * y)};
}

std::vector<Value> vjp_erf(const VjpArgs& args) {
  Value x = args.inputs[0];
  return {args.cotangent * (2.0 / std::sqrt(std::numbers::pi)) * exp(-(x * x))};
}

std::vector<Value> vjp_add(const VjpArgs& args) {
  if (!differentiable(args)) return {Value(), Value()};
  return {args.cotangent, args.cotangent};
}

std::vector<Value> vjp_sub(const VjpArgs& args) {
  if (!differentiable(args)) return {Value(), Value()};
  return {args.cotangent, -args.cotangent};
}

std::vector<Value> vjp_mul(const VjpArgs& args) {
  if (!differentiable(args)) return {Value(), Value()};
  return {args.cotangent * args.inputs[1], args.cotangent * args.inputs[0]};
}

std::vector<Value> vjp_div(const VjpArgs& args) {
  if (!differentiable(args)) return {Value(), Value()};
  Value b = args.inputs[1];
  Value da = args.cotangent / b;
  return {da, -(da * args.output)};
}

// Ties split the gradient half/half, as torch.maximum.
std::vector<Value> vjp_max(const VjpArgs& args) {
  if (!differentiable(args)) return {Value(), Value()};
  Value a = args.inputs[0], b = args.inputs[1];
  Value tie = eq(a, b);
  return {tie_split(gt(a, b), tie, args.cotangent), tie_split(lt(a, b), tie, args.cotangent)};
}

std::vector<Value> vjp_min(const VjpArgs& args) {
  if (!differentiable(args)) return {Value(), Value()};
  Value a = args.inputs[0], b = args.inputs[1];
  Value tie = eq(a, b);
  return {tie_split(lt(a, b), tie, args.cotangent), tie_split(gt(a, b), tie, args.cotangent)};
}

// da = g b a^(b-1) (0 where b == 0, as torch); db = g out log(a) (0 where a == 0, not NaN).
std::vector<Value> vjp_pow(const VjpArgs& args) {
  if (!differentiable(args)) return {Value(), Value()};
  Value a = args.inputs[0], b = args.inputs[1], g = args.cotangent;
  Value zero = scalar_like(g, 0.0);
  Value da = select(eq(b, zero), zero, g * b * pow(a, b - 1.0));
  Value db = select(eq(a, zero), zero, g * args.output * log(a));
  return {da, db};
}

}  // namespace rules
}  // namespace kiln
