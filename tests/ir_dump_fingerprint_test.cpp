// graph_dump of a small fixed graph, and graph_fingerprint: equal for graphs built the same way,
// different when an op, attribute, dtype, shape, edge, constant or the output list changes.
#include <gtest/gtest.h>

#include "kiln/ir/ops.h"

namespace kiln {
namespace {

TEST(IrDump, SmallGraph) {
  Graph g;
  Value x = g.input("x", DType::f32, {4, 3});
  Value w = g.input("w", DType::f32, {3, 2}, InputRole::weight);
  exp(x);  // dead: not printed
  Value y = dot_general(x, w, DotAttrs{{}, {}, {1}, {0}});
  Value bias = constant(g, Tensor::from_doubles(DType::f32, {2}, {0.5, -1.0}));
  Value z = y + bias;
  Value rows = reduce_sum(z, {1});
  Value picked = slice(z, {0, 0}, {4, 2}, {2, 1});
  Value mask = gt(picked, scalar_like(picked, 0.0));
  Value positive = select(mask, picked, picked * 2.5);
  Value ids = constant(g, Tensor::from_doubles(DType::i64, {6}, {0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(graph_dump(g, {rows, positive, ids}),
            "%0 = input \"x\" data : f32(4,3)\n"
            "%1 = input \"w\" weight : f32(3,2)\n"
            "%3 = dot_general(%0, %1) {lhs_contract=[1], rhs_contract=[0]} : f32(4,2)\n"
            "%4 = constant [0.5, -1] : f32(2)\n"
            "%5 = broadcast(%4) {dims=[1]} : f32(4,2)\n"
            "%6 = add(%3, %5) : f32(4,2)\n"
            "%7 = reduce_sum(%6) {axes=[1]} : f32(4)\n"
            "%8 = slice(%6) {start=[0,0], limit=[4,2], stride=[2,1]} : f32(2,2)\n"
            "%9 = constant 0 : f32()\n"
            "%10 = broadcast(%9) : f32(2,2)\n"
            "%11 = compare(%8, %10) {dir=gt} : bool(2,2)\n"
            "%12 = constant 2.5 : f32()\n"
            "%13 = broadcast(%12) : f32(2,2)\n"
            "%14 = mul(%8, %13) : f32(2,2)\n"
            "%15 = select(%11, %8, %14) : f32(2,2)\n"
            "%16 = constant [0, 1, 2, 3, ...] : i64(6)\n"
            "return %7, %15, %16\n");
}

TEST(IrDump, PadAndTransposeAttributes) {
  Graph g;
  Value x = g.input("x", DType::bf16, {2, 3});
  Value p = pad(transpose(x, {1, 0}), {1, 0}, {0, 2}, -1.0);
  EXPECT_EQ(graph_dump(g, {p}),
            "%0 = input \"x\" data : bf16(2,3)\n"
            "%1 = transpose(%0) {perm=[1,0]} : bf16(3,2)\n"
            "%2 = pad(%1) {low=[1,0], high=[0,2], value=-1} : bf16(4,4)\n"
            "return %2\n");
}

// What can vary between two otherwise equal builds of one small graph.
struct Recipe {
  std::string a_name = "a";
  DType dtype = DType::f32;
  Shape a_shape = {4, 3};
  InputRole b_role = InputRole::weight;
  bool unrelated = false;  // dead nodes and extra inputs that no output depends on
  bool tanh_instead_of_exp = false;
  CompareDir dir = CompareDir::gt;
  bool swap_sub = false;
  double scale = 2.0;
  bool reorder_outputs = false;
  bool drop_output = false;
};

uint64_t fingerprint_of(const Recipe& r) {
  Graph g;
  if (r.unrelated) {
    Value spare = g.input("spare", DType::f32, {7});
    (void)spare;
  }
  Value a = g.input(r.a_name, r.dtype, r.a_shape);
  Value b = g.input("b", r.dtype, {3}, r.b_role);
  if (r.unrelated) {
    log(a);
    g.input("late", DType::i32, {2});
  }
  Value s = r.swap_sub ? sub(b, a) : sub(a, b);
  Value act = r.tanh_instead_of_exp ? tanh(s) : exp(s);
  Value scaled = act * r.scale;
  Value mask = compare(scaled, a, r.dir);
  Value out = select(mask, scaled, a);
  Value total = reduce_sum(out, {0});
  if (r.drop_output) return graph_fingerprint(g, {total});
  return r.reorder_outputs ? graph_fingerprint(g, {out, total})
                           : graph_fingerprint(g, {total, out});
}

TEST(IrFingerprint, EqualForGraphsBuiltTheSameWay) {
  Recipe base;
  EXPECT_EQ(fingerprint_of(base), fingerprint_of(base));
  Recipe renamed;
  renamed.a_name = "other name";
  EXPECT_EQ(fingerprint_of(renamed), fingerprint_of(base));
}

TEST(IrFingerprint, IgnoresUnrelatedNodesAndLaterInputs) {
  // Dead nodes and inputs created after the live ones change no node id the outputs see
  // canonically, nor any live input's argument position.
  Graph g1, g2;
  Value a1 = g1.input("a", DType::f32, {4});
  Value a2 = g2.input("renamed", DType::f32, {4});
  exp(a2);
  g2.input("unused", DType::f64, {9});
  Value c2 = neg(a2);
  tanh(c2);
  EXPECT_EQ(graph_fingerprint(g1, {neg(a1)}), graph_fingerprint(g2, {c2}));
}

TEST(IrFingerprint, ChangesWithWhatIsComputed) {
  const uint64_t base = fingerprint_of(Recipe{});
  auto differs = [&](auto&& change) {
    Recipe r;
    change(r);
    return fingerprint_of(r) != base;
  };
  EXPECT_TRUE(differs([](Recipe& r) { r.tanh_instead_of_exp = true; }));  // op
  EXPECT_TRUE(differs([](Recipe& r) { r.dir = CompareDir::ge; }));        // attribute
  EXPECT_TRUE(differs([](Recipe& r) { r.dtype = DType::f64; }));          // dtype
  EXPECT_TRUE(differs([](Recipe& r) { r.a_shape = {5, 3}; }));            // shape
  EXPECT_TRUE(differs([](Recipe& r) { r.swap_sub = true; }));             // edge
  EXPECT_TRUE(differs([](Recipe& r) { r.scale = 3.0; }));                 // constant value
  EXPECT_TRUE(differs([](Recipe& r) { r.reorder_outputs = true; }));      // output order
  EXPECT_TRUE(differs([](Recipe& r) { r.drop_output = true; }));          // output list
  EXPECT_TRUE(differs([](Recipe& r) { r.b_role = InputRole::data; }));    // input role
  EXPECT_TRUE(differs([](Recipe& r) { r.unrelated = true; }));  // an earlier input shifts arguments
}

TEST(IrFingerprint, ChangesWithLayoutAttributes) {
  auto fingerprint = [](const Shape& stride, double pad_value) {
    Graph g;
    Value x = g.input("x", DType::f32, {6, 4});
    Value s = slice(x, {0, 0}, {6, 4}, stride);
    return graph_fingerprint(g, {pad(s, {1, 1}, {0, 0}, pad_value)});
  };
  EXPECT_EQ(fingerprint({2, 1}, 0.0), fingerprint({2, 1}, 0.0));
  EXPECT_NE(fingerprint({2, 1}, 0.0), fingerprint({3, 1}, 0.0));
  EXPECT_NE(fingerprint({1, 2}, 0.0), fingerprint({1, 3}, 0.0));  // same output shape (6,2)
  EXPECT_NE(fingerprint({2, 1}, 0.0), fingerprint({2, 1}, 1.0));
}

}  // namespace
}  // namespace kiln
