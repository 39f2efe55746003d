// dot_general on the CPU backend against the reference for every arrangement of batch,
// contracting and free dims over operands of rank 1 to 3 (each pairing order included), in the
// dtypes that take oneDNN (f32, bf16 -> f32) and the loop fallback (f64, i32), plus the
// transposed and batched layouts of transformer matrix multiplies at realistic sizes.
#include <algorithm>
#include <string>

#include "cpu_test_util.h"
#include "kiln/backends/cpu/cpu_isa.h"

namespace kiln {
namespace {

using testing::Feeds;

enum class Role { batch, contract, free };

struct Arrangement {
  Shape lhs, rhs;
  DotAttrs attrs;
};

// Every role assignment of lhs and rhs dims with equal batch and contracting counts, and every
// pairing of the rhs's batch and contracting dims with the lhs's (in lhs order).
std::vector<Arrangement> arrangements() {
  std::vector<Arrangement> out;
  for (size_t lhs_rank = 1; lhs_rank <= 3; ++lhs_rank) {
    for (size_t rhs_rank = 1; rhs_rank <= 3; ++rhs_rank) {
      size_t lhs_codes = static_cast<size_t>(std::pow(3, lhs_rank));
      size_t rhs_codes = static_cast<size_t>(std::pow(3, rhs_rank));
      for (size_t lc = 0; lc < lhs_codes; ++lc) {
        for (size_t rc = 0; rc < rhs_codes; ++rc) {
          auto roles = [](size_t code, size_t rank) {
            std::vector<Role> r;
            for (size_t d = 0; d < rank; ++d, code /= 3) r.push_back(static_cast<Role>(code % 3));
            return r;
          };
          std::vector<Role> lr = roles(lc, lhs_rank), rr = roles(rc, rhs_rank);
          auto dims_of = [](const std::vector<Role>& r, Role role) {
            Axes dims;
            for (size_t d = 0; d < r.size(); ++d) {
              if (r[d] == role) dims.push_back(static_cast<int64_t>(d));
            }
            return dims;
          };
          Axes lb = dims_of(lr, Role::batch), lcn = dims_of(lr, Role::contract);
          Axes rb = dims_of(rr, Role::batch), rcn = dims_of(rr, Role::contract);
          if (lb.size() != rb.size() || lcn.size() != rcn.size()) continue;
          do {
            do {
              Arrangement a{Shape(lhs_rank), Shape(rhs_rank), {lb, rb, lcn, rcn}};
              for (size_t i = 0; i < lb.size(); ++i) a.lhs[lb[i]] = a.rhs[rb[i]] = 2 + i;
              for (size_t i = 0; i < lcn.size(); ++i) a.lhs[lcn[i]] = a.rhs[rcn[i]] = 4 + i;
              for (size_t d = 0; d < lhs_rank; ++d) {
                if (lr[d] == Role::free) a.lhs[d] = 3 + 3 * d;
              }
              for (size_t d = 0; d < rhs_rank; ++d) {
                if (rr[d] == Role::free) a.rhs[d] = 7 + d;
              }
              out.push_back(a);
            } while (std::next_permutation(rcn.begin(), rcn.end()));
          } while (std::next_permutation(rb.begin(), rb.end()));
        }
      }
    }
  }
  return out;
}

// The operand and result dtypes that go to oneDNN.
constexpr std::pair<DType, DType> kOneDnnDtypes[] = {
    {DType::f32, DType::f32}, {DType::bf16, DType::f32}, {DType::bf16, DType::bf16}};

// dot_general of random `in` operands shaped and arranged as `a`, with an `out` result.
Value random_dot(Feeds& feeds, const Arrangement& a, DType in, DType out) {
  Value lhs = feeds.any(in, a.lhs), rhs = feeds.any(in, a.rhs);  // in this order: same draws
  return dot_general(lhs, rhs, a.attrs, out);
}

void check_arrangement(const Arrangement& a, DType in, DType out, uint64_t seed = 3) {
  Graph graph;
  Feeds feeds(graph, seed);
  testing::expect_matches_reference(graph, {random_dot(feeds, a, in, out)}, feeds.arguments());
}

TEST(CpuDot, EveryArrangementMatchesReference) {
  std::vector<Arrangement> all = arrangements();
  EXPECT_EQ(all.size(), 257u);  // role assignments times pairings, counted independently
  for (const Arrangement& a : all) {
    SCOPED_TRACE("lhs " + shape_str(a.lhs) + " rhs " + shape_str(a.rhs) + " batch " +
                 shape_str(a.attrs.lhs_batch) + "/" + shape_str(a.attrs.rhs_batch) + " contract " +
                 shape_str(a.attrs.lhs_contract) + "/" + shape_str(a.attrs.rhs_contract));
    check_arrangement(a, DType::f32, DType::f32);
    check_arrangement(a, DType::bf16, DType::f32);
    check_arrangement(a, DType::bf16, DType::bf16);
    check_arrangement(a, DType::f64, DType::f64);
    check_arrangement(a, DType::i32, DType::i32);
  }
}

// Layouts of BERT's products at sizes where oneDNN's blocked kernels engage: x W, x W^T (the
// backward's dX), X^T dY (dW), batched Q K^T and P V, and a batch dim that is not outermost.
TEST(CpuDot, TransformerLayoutsMatchReference) {
  const std::vector<Arrangement> cases = {
      {{96, 64}, {64, 80}, {{}, {}, {1}, {0}}},
      {{96, 64}, {80, 64}, {{}, {}, {1}, {1}}},
      {{64, 96}, {64, 80}, {{}, {}, {0}, {0}}},
      {{2, 16, 64}, {64, 48}, {{}, {}, {2}, {0}}},
      {{2, 16, 64}, {2, 16, 48}, {{}, {}, {0, 1}, {0, 1}}},
      {{2, 4, 32, 16}, {2, 4, 24, 16}, {{0, 1}, {0, 1}, {3}, {3}}},
      {{2, 4, 32, 24}, {2, 4, 24, 16}, {{0, 1}, {0, 1}, {3}, {2}}},
      {{32, 3, 16}, {3, 16, 20}, {{1}, {0}, {2}, {1}}},
  };
  for (const Arrangement& c : cases) {
    SCOPED_TRACE("lhs " + shape_str(c.lhs) + " rhs " + shape_str(c.rhs));
    for (auto [in, out] : kOneDnnDtypes) check_arrangement(c, in, out, 5);
  }
}

// Large enough for the rhs to be packed into oneDNN's blocked layout before the product (at
// least 512 lhs rows and 2^21 rhs elements): plain (in f32 a block-by-block copy), transposed (a
// oneDNN reorder), and plain with a last dim that is not whole blocks (2100 columns: a reorder
// that pads, in both dtypes).
// Sums of 1024 products of magnitude up to 4, accumulated in float: absolute errors reach a few
// 1e-5 on results of magnitude ~40, hence 20 times the f32 tolerance.
TEST(CpuDot, PackedWeightsMatchReference) {
  for (DType dtype : {DType::f32, DType::bf16}) {
    Graph graph;
    Feeds feeds(graph, 9);
    Value a = feeds.any(dtype, {512, 1024}), b = feeds.any(dtype, {1024, 2048});
    Value bt = feeds.any(dtype, {2048, 1024}), b_ragged = feeds.any(dtype, {1024, 2100});
    testing::expect_matches_reference(graph,
                                      {dot_general(a, b, {{}, {}, {1}, {0}}, DType::f32),
                                       dot_general(a, bt, {{}, {}, {1}, {1}}, DType::f32),
                                       dot_general(a, b_ragged, {{}, {}, {1}, {0}}, DType::f32)},
                                      feeds.arguments(), {}, 20.0);
  }
}

// Whether oneDNN runs AVX-512 code here: the CPU has it and neither KILN_MAX_CPU_ISA nor
// ONEDNN_MAX_CPU_ISA caps it below.
bool onednn_uses_avx512() { return cpu::onednn_cpu_isa().starts_with("avx512"); }

// Attention's products on heads read in place from [batch, seq, heads, head_dim] (batch dims 0
// and 2, which no single stride spans): Q K^T (as dC V^T), P V (as dS K) and P^T dC (as dS^T Q),
// in every dtype pair oneDNN takes, as one kernel with no copy of an operand; with AVX-512 the
// arena, where oneDNN's own copies would go, stays empty too.
TEST(CpuDot, HeadsReadInPlaceFromTheHiddenLayout) {
  const Shape hidden = {2, 24, 3, 16}, probs = {2, 3, 24, 24};
  const std::vector<Arrangement> cases = {
      {hidden, hidden, {{0, 2}, {0, 2}, {3}, {3}}},  // Q K^T
      {probs, hidden, {{0, 1}, {0, 2}, {3}, {1}}},   // P V
      {probs, hidden, {{0, 1}, {0, 2}, {2}, {1}}},   // P^T dC
  };
  for (const Arrangement& c : cases) {
    SCOPED_TRACE("lhs " + shape_str(c.lhs) + " rhs " + shape_str(c.rhs));
    for (auto [in, out] : kOneDnnDtypes) {
      Graph graph;
      Feeds feeds(graph, 7);
      Value product = random_dot(feeds, c, in, out);
      ExecutableStats stats = make_cpu_backend()->compile(graph, {product})->stats();
      EXPECT_EQ(stats.kernels, 1);  // the product alone: Kiln copies no operand
      // oneDNN's AVX-512 matmuls read the strided heads directly; its AVX2 ones copy them into
      // their scratchpad (9-12 KB here), which the arena then holds.
      if (onednn_uses_avx512()) {
        EXPECT_EQ(stats.arena_bytes, 0);
      }
      testing::expect_matches_reference(graph, {product}, feeds.arguments());
    }
  }
}

// Empty contracting dims give zeros; empty free dims an empty result.
TEST(CpuDot, EmptyDims) {
  Graph graph;
  Feeds feeds(graph, 1);
  Value a = feeds.any(DType::f32, {3, 0}), b = feeds.any(DType::f32, {0, 4});
  Value c = feeds.any(DType::f32, {0, 5}), d = feeds.any(DType::f32, {5, 2});
  testing::expect_matches_reference(graph, {matmul(a, b), matmul(c, d)}, feeds.arguments());
}

}  // namespace
}  // namespace kiln
