// Finite-difference gradient checks (float64, reference backend) for every differentiable op and
// composite, over random shapes with broadcasting and size-1 dims; plus the registry coverage
// test that fails when a differentiable op has no case here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "kiln/ir/op_registry.h"
#include "support/gradcheck.h"

namespace kiln {
namespace {

using testing::ArgSpec;
using testing::BuildFn;
using Rng = std::mt19937_64;
using SpecsFn = std::function<std::vector<ArgSpec>(Rng&)>;

struct GradCase {
  std::string name;
  OpKind op;  // the op whose VJP (or decomposition) this case exercises
  SpecsFn specs;
  BuildFn build;
  double step = 1e-6;
  double rtol = 1e-5;
  double atol = 1e-7;
};

int64_t random_dim(Rng& rng, int64_t low = 1, int64_t high = 4) {
  return std::uniform_int_distribution<int64_t>(low, high)(rng);
}

// A random shape of rank in [min_rank, max_rank] with dims in [1, 4] (size-1 dims included).
Shape random_shape(Rng& rng, int64_t min_rank = 0, int64_t max_rank = 3) {
  Shape shape(static_cast<size_t>(random_dim(rng, min_rank, max_rank)));
  for (int64_t& dim : shape) dim = random_dim(rng);
  return shape;
}

// A shape that broadcasts to `full`: some leading dims dropped, some others set to 1.
Shape broadcastable_to(Rng& rng, const Shape& full) {
  Shape shape(full.begin() + random_dim(rng, 0, static_cast<int64_t>(full.size())), full.end());
  for (int64_t& dim : shape) {
    if (random_dim(rng, 0, 2) == 0) dim = 1;
  }
  return shape;
}

ArgSpec arg(Shape shape, double low = -1.0, double high = 1.0) {
  return ArgSpec{DType::f64, std::move(shape), low, high};
}

SpecsFn unary_specs(double low, double high) {
  return [=](Rng& rng) { return std::vector<ArgSpec>{arg(random_shape(rng), low, high)}; };
}

GradCase unary_case(std::string name, OpKind op, Value (*fn)(Value), double low = -2.0,
                    double high = 2.0) {
  return {std::move(name), op, unary_specs(low, high),
          [fn](const std::vector<Value>& a) { return fn(a[0]); }};
}

// Binary ops on a random shape and a random shape broadcastable to it (either side).
GradCase binary_case(std::string name, OpKind op, Value (*fn)(Value, Value), double low_a,
                     double high_a, double low_b, double high_b) {
  SpecsFn specs = [=](Rng& rng) {
    Shape full = random_shape(rng);
    Shape other = broadcastable_to(rng, full);
    bool swap = random_dim(rng, 0, 1) == 1;
    return std::vector<ArgSpec>{arg(swap ? other : full, low_a, high_a),
                                arg(swap ? full : other, low_b, high_b)};
  };
  return {std::move(name), op, specs, [fn](const std::vector<Value>& a) { return fn(a[0], a[1]); }};
}

// Values in [low, high) with a random sign: keeps div and pow-free ops away from zero.
ArgSpec away_from_zero(Shape shape, Rng& rng, double low, double high) {
  ArgSpec spec = arg(shape, low, high);
  std::uniform_real_distribution<double> dist(low, high);
  std::bernoulli_distribution negative(0.5);
  for (int64_t i = 0; i < shape_numel(shape); ++i) {
    spec.values.push_back(negative(rng) ? -dist(rng) : dist(rng));
  }
  return spec;
}

std::vector<GradCase> all_cases() {
  std::vector<GradCase> cases = {
      unary_case("neg", OpKind::neg, &neg),
      unary_case("abs", OpKind::abs, &abs),
      unary_case("sign", OpKind::sign, &sign),
      unary_case("exp", OpKind::exp, &exp),
      unary_case("log", OpKind::log, &log, 0.2, 3.0),
      unary_case("tanh", OpKind::tanh, &tanh),
      unary_case("logistic", OpKind::logistic, &logistic, -4.0, 4.0),
      unary_case("sqrt", OpKind::sqrt, &sqrt, 0.2, 3.0),
      unary_case("rsqrt", OpKind::rsqrt, &rsqrt, 0.2, 3.0),
      unary_case("erf", OpKind::erf, &erf),
      binary_case("add", OpKind::add, &add, -2, 2, -2, 2),
      binary_case("sub", OpKind::sub, &sub, -2, 2, -2, 2),
      binary_case("mul", OpKind::mul, &mul, -2, 2, -2, 2),
      binary_case("max", OpKind::max, &max, -2, 2, -2, 2),
      binary_case("min", OpKind::min, &min, -2, 2, -2, 2),
      binary_case("pow", OpKind::pow, static_cast<Value (*)(Value, Value)>(&pow), 0.3, 2.5,
                  -2, 2),
  };
  cases.push_back({"div", OpKind::div,
                   [](Rng& rng) {
                     Shape full = random_shape(rng);
                     return std::vector<ArgSpec>{arg(full, -2, 2),
                                                 away_from_zero(broadcastable_to(rng, full), rng,
                                                                0.5, 2.0)};
                   },
                   [](const std::vector<Value>& a) { return a[0] / a[1]; }});
  cases.push_back({"scalar_operands", OpKind::broadcast,
                   [](Rng& rng) { return std::vector<ArgSpec>{arg(random_shape(rng, 1, 3))}; },
                   [](const std::vector<Value>& a) { return (2.0 - a[0] * 3.0) / 4.0 + 1.0; }});
  cases.push_back({"select", OpKind::select,
                   [](Rng& rng) {
                     Shape full = random_shape(rng, 1);
                     return std::vector<ArgSpec>{arg(full), arg(broadcastable_to(rng, full)),
                                                 arg(full)};
                   },
                   [](const std::vector<Value>& a) {
                     return select(gt(a[0], scalar_like(a[0], 0.0)), a[1] * 2.0, a[2]);
                   }});
  cases.push_back({"cast", OpKind::cast, unary_specs(-2, 2),
                   [](const std::vector<Value>& a) {
                     return cast(exp(cast(a[0], DType::f32)), DType::f64);
                   },
                   1e-3, 1e-3, 1e-4});
  cases.push_back({"broadcast_in_dim", OpKind::broadcast,
                   [](Rng& rng) {
                     return std::vector<ArgSpec>{arg({random_dim(rng), 1})};
                   },
                   [](const std::vector<Value>& a) {
                     Shape out = {3, a[0].dim(0), 2, 4};
                     return broadcast_in_dim(a[0], out, {1, 2});
                   }});
  cases.push_back({"reshape", OpKind::reshape,
                   [](Rng& rng) { return std::vector<ArgSpec>{arg({random_dim(rng), 6})}; },
                   [](const std::vector<Value>& a) { return reshape(a[0], {3, -1, 2}); }});
  cases.push_back({"transpose", OpKind::transpose,
                   [](Rng& rng) { return std::vector<ArgSpec>{arg(random_shape(rng, 3, 3))}; },
                   [](const std::vector<Value>& a) { return transpose(a[0], {2, 0, 1}); }});
  cases.push_back({"slice", OpKind::slice,
                   [](Rng& rng) {
                     return std::vector<ArgSpec>{arg({random_dim(rng, 5, 7), random_dim(rng, 3, 4)})};
                   },
                   [](const std::vector<Value>& a) {
                     return slice(a[0], {1, 0}, {a[0].dim(0), 3}, {2, 1});
                   }});
  cases.push_back({"concat", OpKind::concat,
                   [](Rng& rng) {
                     int64_t rows = random_dim(rng);
                     return std::vector<ArgSpec>{arg({rows, random_dim(rng)}),
                                                 arg({rows, random_dim(rng)})};
                   },
                   [](const std::vector<Value>& a) { return concat({a[0], a[1], a[0]}, 1); }});
  cases.push_back({"pad", OpKind::pad,
                   [](Rng& rng) { return std::vector<ArgSpec>{arg(random_shape(rng, 2, 2))}; },
                   [](const std::vector<Value>& a) { return pad(a[0], {1, 0}, {2, 1}, 0.5); }});
  cases.push_back({"reduce_sum", OpKind::reduce_sum,
                   [](Rng& rng) { return std::vector<ArgSpec>{arg(random_shape(rng, 3, 3))}; },
                   [](const std::vector<Value>& a) { return reduce_sum(a[0], {0, 2}); }});
  cases.push_back({"mean_keepdims", OpKind::reduce_sum,
                   [](Rng& rng) { return std::vector<ArgSpec>{arg(random_shape(rng, 2, 3))}; },
                   [](const std::vector<Value>& a) { return mean(a[0], {-1}, true) * a[0]; }});
  cases.push_back({"reduce_max", OpKind::reduce_max,
                   [](Rng& rng) { return std::vector<ArgSpec>{arg(random_shape(rng, 2, 3))}; },
                   [](const std::vector<Value>& a) { return reduce_max(a[0], {1}); }});
  cases.push_back({"dot_general", OpKind::dot_general,
                   [](Rng& rng) {
                     int64_t b = random_dim(rng), m = random_dim(rng), k = random_dim(rng),
                             n = random_dim(rng);
                     return std::vector<ArgSpec>{arg({k, b, m}), arg({b, n, k})};
                   },
                   [](const std::vector<Value>& a) {
                     return dot_general(a[0], a[1], DotAttrs{{1}, {0}, {0}, {2}});
                   }});
  cases.push_back({"matmul_broadcast", OpKind::dot_general,
                   [](Rng& rng) {
                     int64_t m = random_dim(rng), k = random_dim(rng), n = random_dim(rng);
                     return std::vector<ArgSpec>{arg({2, 1, m, k}), arg({3, k, n})};
                   },
                   [](const std::vector<Value>& a) { return matmul(a[0], a[1]); }});
  cases.push_back({"gather", OpKind::gather,
                   [](Rng& rng) {
                     ArgSpec indices{DType::i32, {2, 3}, 0, 5, false};
                     return std::vector<ArgSpec>{arg({random_dim(rng), 5, 2}), indices};
                   },
                   [](const std::vector<Value>& a) { return gather(a[0], a[1], 1); }});
  cases.push_back({"scatter_add", OpKind::scatter_add,
                   [](Rng& rng) {
                     int64_t cols = random_dim(rng);
                     ArgSpec indices{DType::i64, {4}, 0, 3, false, {2, 0, 2, 1}};
                     return std::vector<ArgSpec>{arg({3, cols}), indices, arg({4, cols})};
                   },
                   [](const std::vector<Value>& a) { return scatter_add(a[0], a[1], a[2], 0); }});
  cases.push_back({"softmax", OpKind::softmax,
                   [](Rng& rng) { return std::vector<ArgSpec>{arg(random_shape(rng, 1, 3), -3, 3)}; },
                   [](const std::vector<Value>& a) { return softmax(a[0], 0); }});
  cases.push_back({"log_softmax", OpKind::log_softmax,
                   [](Rng& rng) { return std::vector<ArgSpec>{arg(random_shape(rng, 1, 3), -3, 3)}; },
                   [](const std::vector<Value>& a) { return log_softmax(a[0], -1); }});
  cases.push_back({"layer_norm", OpKind::layer_norm,
                   [](Rng& rng) {
                     Shape shape = random_shape(rng, 1, 3);
                     shape.back() = random_dim(rng, 2, 5);
                     return std::vector<ArgSpec>{arg(shape, -2, 2), arg({shape.back()}, 0.5, 1.5),
                                                 arg({shape.back()})};
                   },
                   [](const std::vector<Value>& a) { return layer_norm(a[0], a[1], a[2], 1e-5); }});
  // Through its decomposition (second order).
  cases.push_back({"layer_norm_grads", OpKind::layer_norm_grads,
                   [](Rng& rng) {
                     Shape shape = random_shape(rng, 1, 3);
                     shape.back() = random_dim(rng, 2, 5);
                     return std::vector<ArgSpec>{arg(shape, -2, 2), arg({shape.back()}, 0.5, 1.5),
                                                 arg(shape)};
                   },
                   [](const std::vector<Value>& a) {
                     return layer_norm_grads(a[0], a[1], a[2], 1e-5);
                   }});
  cases.push_back(unary_case("gelu", OpKind::gelu, &gelu, -3.0, 3.0));
  // Through its decomposition (second order).
  cases.push_back({"gelu_grad", OpKind::gelu_grad,
                   [](Rng& rng) {
                     Shape shape = random_shape(rng);
                     return std::vector<ArgSpec>{arg(shape, -3, 3), arg(shape)};
                   },
                   [](const std::vector<Value>& a) { return gelu_grad(a[0], a[1]); }});
  cases.push_back({"cross_entropy", OpKind::cross_entropy,
                   [](Rng& rng) {
                     ArgSpec labels{DType::i64, {5}, 0, 4, false, {0, -100, 3, 2, 0}};
                     (void)rng;
                     return std::vector<ArgSpec>{arg({5, 4}, -3, 3), labels};
                   },
                   [](const std::vector<Value>& a) { return cross_entropy(a[0], a[1]); }});
  cases.push_back({"attention", OpKind::attention,
                   [](Rng& rng) {
                     int64_t b = random_dim(rng, 1, 2), h = random_dim(rng, 1, 2),
                             s = random_dim(rng, 1, 4), d = random_dim(rng, 1, 3);
                     return std::vector<ArgSpec>{arg({b, h, s, d}), arg({b, h, s, d}),
                                                 arg({b, h, s, d}), arg({b, 1, 1, s})};
                   },
                   [](const std::vector<Value>& a) { return attention(a[0], a[1], a[2], a[3], 0.7); }});
  // Dropout keyed per batch row, odd query and key lengths, a causal-shaped [1, 1, Sq, Sk] mask.
  cases.push_back({"attention_dropout", OpKind::attention,
                   [](Rng& rng) {
                     int64_t b = random_dim(rng, 1, 3), h = random_dim(rng, 1, 2),
                             sq = random_dim(rng, 1, 5), sk = random_dim(rng, 2, 7),
                             d = random_dim(rng, 1, 3);
                     return std::vector<ArgSpec>{arg({b, h, sq, d}), arg({b, h, sk, d}),
                                                 arg({b, h, sk, d}), arg({1, 1, sq, sk}, -2, 0)};
                   },
                   [](const std::vector<Value>& a) {
                     Graph& graph = a[0].graph();
                     Value seed = constant(graph, Tensor::scalar(DType::i64, 77));
                     Tensor keys(DType::i64, {a[0].dim(0)});
                     for (int64_t i = 0; i < keys.numel(); ++i) keys.set(i, 3.0 * i);
                     AttentionDropout drop{seed, constant(graph, keys), 0.3, 4};
                     return attention(a[0], a[1], a[2], a[3], 0.7, drop);
                   }});
  // seq_first ([B, S, H, D]), as multi_head_attention lays q, k and v out, with dropout.
  cases.push_back({"attention_seq_first", OpKind::attention,
                   [](Rng& rng) {
                     int64_t b = random_dim(rng, 1, 2), h = random_dim(rng, 2, 3),
                             sq = random_dim(rng, 1, 4), sk = random_dim(rng, 2, 5),
                             d = random_dim(rng, 1, 3);
                     return std::vector<ArgSpec>{arg({b, sq, h, d}), arg({b, sk, h, d}),
                                                 arg({b, sk, h, d}), arg({b, 1, 1, sk}, -2, 0)};
                   },
                   [](const std::vector<Value>& a) {
                     Graph& graph = a[0].graph();
                     AttentionDropout drop{constant(graph, Tensor::scalar(DType::i64, 5)),
                                           constant(graph, Tensor::scalar(DType::i64, 2)), 0.3, 1};
                     return attention(a[0], a[1], a[2], a[3], 0.7, drop, std::nullopt,
                                      AttentionLayout::seq_first);
                   }});
  // Through its decomposition (second order: nothing differentiates it today, but it can be).
  cases.push_back({"attention_grad", OpKind::attention_grad,
                   [](Rng& rng) {
                     int64_t b = random_dim(rng, 1, 2), s = random_dim(rng, 1, 3),
                             d = random_dim(rng, 1, 2);
                     Shape shape{b, 2, s, d};
                     return std::vector<ArgSpec>{arg(shape), arg(shape), arg(shape),
                                                 arg({b, 1, 1, s}), arg(shape), arg(shape)};
                   },
                   [](const std::vector<Value>& a) {
                     return attention_grad(a[0], a[1], a[2], a[3], a[4], a[5], 0.7);
                   }});
  cases.push_back({"dropout", OpKind::dropout,
                   [](Rng& rng) { return std::vector<ArgSpec>{arg(random_shape(rng, 1, 3))}; },
                   [](const std::vector<Value>& a) {
                     Graph& graph = a[0].graph();
                     Value seed = constant(graph, Tensor::scalar(DType::i64, 1234));
                     Value offset = constant(graph, Tensor::scalar(DType::i64, 7));
                     return dropout(a[0], seed, offset, 0.4, 3);
                   }});
  // One replica (the reference backend's): the identity, whose cotangent is all_reduced too.
  cases.push_back(unary_case("all_reduce", OpKind::all_reduce, &all_reduce));
  return cases;
}

class GradCheck : public ::testing::TestWithParam<GradCase> {};

TEST_P(GradCheck, MatchesFiniteDifferences) {
  const GradCase& c = GetParam();
  for (uint64_t trial = 0; trial < 4; ++trial) {
    Rng rng(1000 + trial);
    std::vector<ArgSpec> specs = c.specs(rng);
    testing::GradCheckResult result =
        testing::check_gradients(specs, c.build, rng, c.step, c.rtol, c.atol);
    EXPECT_TRUE(result.ok) << c.name << " trial " << trial << ": " << result.message;
    EXPECT_GT(result.checked, 0) << c.name << " checked no element";
  }
}

INSTANTIATE_TEST_SUITE_P(EveryOp, GradCheck, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<GradCase>& info) {
                           return info.param.name;
                         });

// Every op that gradients flow through (a VJP rule or a decomposition) has a case above, and the
// case's graph really contains that op.
TEST(GradCheckCoverage, EveryDifferentiableOpHasACase) {
  std::set<OpKind> covered;
  for (const GradCase& c : all_cases()) {
    Rng rng(1);
    std::vector<OpKind> built = testing::ops_built(c.specs(rng), c.build);
    EXPECT_NE(std::find(built.begin(), built.end(), c.op), built.end())
        << "case " << c.name << " builds no " << op_name(c.op) << " node";
    covered.insert(c.op);
  }
  for (int k = 0; k < kNumOps; ++k) {
    const OpInfo& info = op_info(static_cast<OpKind>(k));
    bool differentiable = info.vjp != nullptr || info.decompose != nullptr;
    if (differentiable) {
      EXPECT_TRUE(covered.count(info.kind)) << "op " << info.name << " has no gradient check";
    }
  }
}

}  // namespace
}  // namespace kiln
