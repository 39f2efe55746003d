// graph_fingerprint: a structural 64-bit hash of what some outputs compute (FNV-1a over a
// canonical, host-independent encoding of the live nodes); bytes_fingerprint: FNV-1a of bytes.
#include <bit>
#include <type_traits>
#include <unordered_map>

#include "kiln/ir/graph.h"

namespace kiln {
namespace {

class Fnv1a {
 public:
  void bytes(const std::byte* data, size_t count) {
    for (size_t i = 0; i < count; ++i) {
      state_ ^= static_cast<uint64_t>(data[i]);
      state_ *= 1099511628211ull;
    }
  }
  // Little-endian whatever the host, so that fingerprints can be compared across machines.
  void u64(uint64_t value) {
    std::byte encoded[8];
    for (int i = 0; i < 8; ++i) encoded[i] = static_cast<std::byte>((value >> (8 * i)) & 0xff);
    bytes(encoded, 8);
  }
  void i64(int64_t value) { u64(static_cast<uint64_t>(value)); }
  void f64(double value) { u64(std::bit_cast<uint64_t>(value)); }
  // Length-prefixed, so that neighbouring lists cannot trade elements.
  void list(const std::vector<int64_t>& values) {
    u64(values.size());
    for (int64_t value : values) i64(value);
  }
  uint64_t value() const { return state_; }

 private:
  uint64_t state_ = 14695981039346656037ull;
};

// Everything but an input's name: its role and argument position (the order backends bind
// arguments in) stand for it.
void hash_attrs(Fnv1a& hash, const Attrs& attrs, int64_t argument) {
  hash.u64(attrs.index());
  std::visit(
      [&](const auto& a) {
        using A = std::decay_t<decltype(a)>;
        if constexpr (std::is_same_v<A, InputAttrs>) {
          hash.u64(static_cast<uint64_t>(a.role));
          hash.i64(argument);
        } else if constexpr (std::is_same_v<A, ConstantAttrs>) {
          hash.u64(a.value.nbytes());
          if (a.value.nbytes()) hash.bytes(a.value.data(), a.value.nbytes());
        } else if constexpr (std::is_same_v<A, IotaAttrs>) {
          hash.i64(a.dim);
        } else if constexpr (std::is_same_v<A, RandomBitsAttrs>) {
          hash.u64(a.stream);
        } else if constexpr (std::is_same_v<A, CompareAttrs>) {
          hash.u64(static_cast<uint64_t>(a.dir));
        } else if constexpr (std::is_same_v<A, BroadcastAttrs>) {
          hash.list(a.dims);
        } else if constexpr (std::is_same_v<A, TransposeAttrs>) {
          hash.list(a.perm);
        } else if constexpr (std::is_same_v<A, SliceAttrs>) {
          hash.list(a.start);
          hash.list(a.limit);
          hash.list(a.stride);
        } else if constexpr (std::is_same_v<A, ConcatAttrs> || std::is_same_v<A, GatherAttrs> ||
                             std::is_same_v<A, SoftmaxAttrs>) {
          hash.i64(a.axis);
        } else if constexpr (std::is_same_v<A, PadAttrs>) {
          hash.list(a.low);
          hash.list(a.high);
          hash.f64(a.value);
        } else if constexpr (std::is_same_v<A, ReduceAttrs>) {
          hash.list(a.axes);
        } else if constexpr (std::is_same_v<A, DotAttrs>) {
          hash.list(a.lhs_batch);
          hash.list(a.rhs_batch);
          hash.list(a.lhs_contract);
          hash.list(a.rhs_contract);
        } else if constexpr (std::is_same_v<A, LayerNormAttrs>) {
          hash.f64(a.eps);
        } else if constexpr (std::is_same_v<A, CrossEntropyAttrs>) {
          hash.i64(a.ignore_index);
        } else if constexpr (std::is_same_v<A, AttentionAttrs>) {
          hash.f64(a.scale);
          hash.f64(a.dropout_rate);
          hash.u64(a.stream);
          hash.u64(static_cast<uint64_t>(a.layout));
        } else if constexpr (std::is_same_v<A, DropoutAttrs>) {
          hash.f64(a.rate);
          hash.u64(a.stream);
        } else {
          static_assert(std::is_same_v<A, NoAttrs>, "hash every attribute struct");
        }
      },
      attrs);
}

}  // namespace

uint64_t graph_fingerprint(const Graph& graph, const std::vector<Value>& outputs) {
  std::unordered_map<int32_t, int64_t> argument;
  for (size_t i = 0; i < graph.inputs().size(); ++i) {
    argument[graph.inputs()[i]] = static_cast<int64_t>(i);
  }
  // Canonical number of a live node: its position among the live nodes.
  std::unordered_map<int32_t, int64_t> canonical;
  Fnv1a hash;
  for (int32_t id : live_nodes(graph, outputs)) {
    const Node& node = graph.node(id);
    auto position = static_cast<int64_t>(canonical.size());
    canonical[id] = position;
    hash.u64(static_cast<uint64_t>(node.op));
    auto arg = argument.find(id);
    hash_attrs(hash, node.attrs, arg == argument.end() ? -1 : arg->second);
    hash.u64(static_cast<uint64_t>(node.dtype));
    hash.list(node.shape);
    hash.u64(node.inputs.size());
    for (int32_t operand : node.inputs) hash.i64(canonical.at(operand));
  }
  hash.u64(outputs.size());
  for (const Value& output : outputs) hash.i64(canonical.at(output.id()));
  return hash.value();
}

uint64_t bytes_fingerprint(std::string_view bytes) {
  Fnv1a hash;
  hash.bytes(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size());
  return hash.value();
}

}  // namespace kiln
