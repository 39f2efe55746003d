// The kernel of a loop group: its nodes become a program of block instructions (loop_program.h)
// with registers reused once their value is dead, run block after block on each thread's range
// of the index space (whole rows when the group reduces), with the registers in scratch.
#include <omp.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <unordered_map>
#include <unordered_set>

#include "kiln/backends/cpu/loop_code.h"
#include "kiln/backends/cpu/loop_program.h"
#include "kiln/backends/cpu/parallel.h"
#include "kiln/ir/error.h"
#include "kiln/ir/op_registry.h"

namespace kiln::cpu {
namespace {

int32_t resolve(const Graph& graph, int32_t id) {
  while (graph.node(id).op == OpKind::reshape) id = graph.node(id).inputs[0];
  return id;
}

// Element i of broadcast `id`'s result in its operand's bytes: a view with zero strides on the
// broadcast dims, then size-1 dims dropped and dims contiguous with the next merged.
LoadView broadcast_view(const Graph& graph, int32_t id) {
  const Node& node = graph.node(id);
  const Shape& from = graph.node(node.inputs[0]).shape;
  const Axes& dims = node.attr<BroadcastAttrs>().dims;
  std::vector<int64_t> from_strides = shape_strides(from);
  std::vector<std::pair<int64_t, int64_t>> merged;  // (size, stride)
  for (size_t d = 0; d < node.shape.size(); ++d) {
    int64_t stride = 0;
    for (size_t k = 0; k < dims.size(); ++k) {
      if (dims[k] == static_cast<int64_t>(d) && from[k] == node.shape[d]) stride = from_strides[k];
    }
    if (node.shape[d] == 1) continue;
    if (!merged.empty() && merged.back().second == stride * node.shape[d]) {
      merged.back() = {merged.back().first * node.shape[d], stride};
    } else {
      merged.emplace_back(node.shape[d], stride);
    }
  }
  LoadView view;
  view.contiguous = merged.empty() || (merged.size() == 1 && merged[0].second == 1);
  check(merged.size() <= kMaxViewDims, "broadcast", "reads more than ", kMaxViewDims,
        " dims in a fused kernel");
  view.rank = static_cast<int64_t>(merged.size());
  for (size_t d = 0; d < merged.size(); ++d) {
    view.sizes[d] = merged[d].first;
    view.strides[d] = merged[d].second;
  }
  return view;
}

Instr instruction(InstrFn run) {
  Instr instr;
  instr.run = run;
  return instr;
}

bool is_reduction(OpKind op) { return op == OpKind::reduce_sum || op == OpKind::reduce_max; }

// Whether a dtype's values are held in registers as stored (its compute type is its storage), so
// that a contiguous operand of it can be read where it lies (an alias).
bool computes_in_storage(DType dtype) {
  return dtype == DType::f32 || dtype == DType::f64 || dtype == DType::i64;
}

// A cast whose operand's register already holds its result: bf16 and f16 compute in float, and
// f32 holds each of their values exactly (the f32 -> bf16 -> f32 pairs of --bf16's rounding).
bool widens_in_place(const Graph& graph, const Node& node) {
  if (node.op != OpKind::cast || node.dtype != DType::f32) return false;
  DType from = graph.node(node.inputs[0]).dtype;
  return from == DType::bf16 || from == DType::f16;
}

// A cast to bf16 or f16 from a dtype computed in float: its store rounds the operand's register
// exactly as the cast would (once, to nearest even), so a cast that is only stored needs no
// instruction (--bf16's products' operands, gelu's and the gradients' casts).
bool narrows_at_store(const Graph& graph, const Node& node) {
  if (node.op != OpKind::cast || (node.dtype != DType::bf16 && node.dtype != DType::f16)) {
    return false;
  }
  DType from = graph.node(node.inputs[0]).dtype;
  return from == DType::f32 || from == DType::bf16 || from == DType::f16;
}

// The nodes of a group that read each node, in the group's order.
using GroupReaders = std::unordered_map<int32_t, std::vector<int32_t>>;

// A cast (node `id`) of f32 to bf16 or f16 read only by casts back to f32 in the group that are
// results and read by nothing else in the group. The pair then takes no instruction: the widening
// casts' stores round (store_rounded_instr), where a rounding pass would take a block of its own
// (--bf16's rounding of gelu's output and its gradient, of the products' operands after dropout
// and of the gradients' sums).
bool rounds_at_widening_stores(const Graph& graph, int32_t id, const GroupReaders& readers,
                               const std::unordered_set<int32_t>& results) {
  const Node& node = graph.node(id);
  auto casts_back = readers.find(id);
  if (!narrows_at_store(graph, node) || graph.node(node.inputs[0]).dtype != DType::f32 ||
      casts_back == readers.end()) {
    return false;
  }
  return std::all_of(casts_back->second.begin(), casts_back->second.end(), [&](int32_t reader) {
    return widens_in_place(graph, graph.node(reader)) && results.contains(reader) &&
           !readers.contains(reader);
  });
}

// The machine-code op of a node (loop_code.h): f32 arithmetic and a cast of f32 to bf16, or none.
CodeOp code_op(const Graph& graph, const Node& node) {
  if (node.op == OpKind::cast && node.dtype == DType::bf16) {
    return graph.node(node.inputs[0]).dtype == DType::f32 ? CodeOp::round_bf16 : CodeOp::none;
  }
  if (node.dtype != DType::f32) return CodeOp::none;
  switch (node.op) {
    case OpKind::add: return CodeOp::add;
    case OpKind::sub: return CodeOp::sub;
    case OpKind::mul: return CodeOp::mul;
    case OpKind::div: return CodeOp::div;
    case OpKind::sqrt: return CodeOp::sqrt;
    case OpKind::neg: return CodeOp::neg;
    default: return CodeOp::none;
  }
}

// Turns the group into instructions over virtual registers (one per value), then maps them onto
// as few registers as liveness allows.
class ProgramBuilder {
 public:
  ProgramBuilder(const Graph& graph, const KernelGroup& group) : graph_(graph) {
    for (int32_t id : group.nodes) {
      if (group.kind == KernelKind::single || graph.node(id).op != OpKind::broadcast) {
        computed_.insert(id);
      } else {
        in_place_.insert(id);
      }
    }
    std::unordered_set<int32_t> results(group.results.begin(), group.results.end());
    GroupReaders readers;  // a node is read in the group when it has an entry
    for (int32_t id : group.nodes) {
      for (int32_t input : graph.node(id).inputs) readers[input].push_back(id);
    }
    std::vector<Instr> stores;
    if (group.kind == KernelKind::single) results.insert(group.nodes.begin(), group.nodes.end());
    std::unordered_set<int32_t> rounded_by_stores;  // rounds_at_widening_stores
    for (int32_t id : group.nodes) {
      if (!computed_.contains(id)) continue;
      const Node& node = graph.node(id);
      if (is_reduction(node.op)) {
        domain_ = shape_numel(graph.node(node.inputs[0]).shape);
        LoopReduction reduction = loop_reduction(graph, node);
        if (reduction.columns > 0) {
          if (results.contains(id)) emit_column_sum(node, id, reduction.columns);
          continue;
        }
        width_ = reduction.width;
        if (results.contains(id)) {
          Instr reduce = instruction(reduce_instr(node));
          reduce.a = operand(node.inputs[0]);
          reduce.node = id;
          reduce.slot = next_slot_++;
          reduce.combine = reduce_combine(node);
          emit(reduce);
        }
        continue;
      }
      domain_ = shape_numel(node.shape);
      if (!results.contains(id) &&
          rounds_at_widening_stores(graph, id, readers, results)) {
        register_of_[id] = operand(node.inputs[0]);  // unrounded: only the stores read it
        rounded_by_stores.insert(id);
        continue;
      }
      if (widens_in_place(graph, node)) {  // no instruction: the operand's register is the result
        int32_t value = operand(node.inputs[0]);
        register_of_[id] = value;
        if (rounded_by_stores.contains(node.inputs[0])) {
          stores.push_back(store_rounded_of(id, value, graph.node(node.inputs[0]).dtype));
        } else if (results.contains(id)) {
          stores.push_back(store_of(node, id, value));
        }
        continue;
      }
      if (narrows_at_store(graph, node) && results.contains(id) && !readers.contains(id)) {
        stores.push_back(store_of(node, id, operand(node.inputs[0])));  // the store rounds
        continue;
      }
      Instr compute = instruction(compute_instr(graph, node));
      if (node.op == OpKind::dropout || node.op == OpKind::random_bits) {
        size_t first = node.op == OpKind::dropout ? 1 : 0;
        compute.seed = node.inputs[first];
        compute.offset = node.inputs[first + 1];
        if (graph.node(compute.offset).shape.size() == 1) {  // one key per leading row
          Shape row(node.shape.begin() + 1, node.shape.end());
          compute.row = std::max<int64_t>(1, shape_numel(row));  // empty rows draw nothing
        }
        if (node.op == OpKind::dropout) {
          const DropoutAttrs& attrs = node.attr<DropoutAttrs>();
          compute.a = operand(node.inputs[0]);
          compute.threshold =
              static_cast<uint32_t>(std::min(std::floor(attrs.rate * 0x1p32), 0x1p32 - 1));
          compute.scale = 1.0 / (1.0 - attrs.rate);
          compute.stream = attrs.stream;
        } else {
          compute.stream = node.attr<RandomBitsAttrs>().stream;
        }
        compute.c = fresh();  // the words
      } else if (node.op == OpKind::iota) {
        auto dim = static_cast<size_t>(node.attr<IotaAttrs>().dim);
        compute.size = node.shape[dim];
        for (size_t d = dim + 1; d < node.shape.size(); ++d) compute.inner *= node.shape[d];
      } else if (!scalar_operand(node, compute) && !scalar_predicate(node, compute)) {
        int32_t* slots[] = {&compute.a, &compute.b, &compute.c};
        for (size_t k = 0; k < node.inputs.size(); ++k) *slots[k] = operand(node.inputs[k]);
        compute.code = code_op(graph_, node);
      }
      compute.out = fresh();
      register_of_[id] = compute.out;
      emit(compute);
      if (results.contains(id)) stores.push_back(store_of(node, id, compute.out));
    }
    // Stores come last: a result may overwrite the bytes of a donated argument that a later
    // instruction of the block still reads.
    for (const Instr& store : stores) emit(store);
    allocate_registers();
  }

  std::vector<Instr> instructions;
  int32_t registers = 0;
  int32_t aliases() const { return aliases_; }
  int32_t slots() const { return next_slot_; }
  int64_t domain() const { return domain_; }
  int64_t width() const { return width_; }

 private:
  int32_t fresh() { return virtual_count_++; }

  // The register holding operand `id`: computed in the group, or loaded (once) from its buffer,
  // directly or through a broadcast read in place.
  int32_t operand(int32_t id) {
    int32_t source = resolve(graph_, id);
    if (auto it = register_of_.find(source); it != register_of_.end()) return it->second;
    Instr load = instruction(load_instr(graph_.node(source).dtype));
    if (in_place_.contains(source)) {
      load.view = broadcast_view(graph_, source);
      load.node = graph_.node(source).inputs[0];
    } else {
      load.node = source;
      if (computes_in_storage(graph_.node(source).dtype)) load.alias = aliases_++;
      load.code = contiguous_code(graph_.node(source).dtype, CodeOp::load, CodeOp::load_bf16);
    }
    load.out = fresh();
    register_of_[source] = load.out;
    emit(load);
    return load.out;
  }

  // The scalar a broadcast read in place spreads (its buffer), or -1.
  int32_t broadcast_scalar(int32_t id) const {
    int32_t source = resolve(graph_, id);
    if (!in_place_.contains(source)) return -1;
    int32_t scalar = graph_.node(source).inputs[0];
    return shape_numel(graph_.node(scalar).shape) == 1 ? scalar : -1;
  }

  // A floating binary node with a broadcast scalar operand reads the scalar itself: the other
  // operand takes a register, the scalar none. False (nothing set) otherwise.
  bool scalar_operand(const Node& node, Instr& compute) {
    if (op_info(node.op).category != OpCategory::binary || !is_floating(node.dtype)) return false;
    for (ScalarOperand side : {ScalarOperand::b, ScalarOperand::a}) {
      bool second = side == ScalarOperand::b;
      int32_t scalar = broadcast_scalar(node.inputs[second ? 1 : 0]);
      InstrFn fn = scalar >= 0 ? binary_scalar_instr(node, side) : nullptr;
      if (fn == nullptr) continue;
      compute.run = fn;
      compute.node = scalar;
      compute.scalar = side;
      compute.code = code_op(graph_, node);
      (second ? compute.a : compute.b) = operand(node.inputs[second ? 0 : 1]);
      return true;
    }
    return false;
  }

  // A select with a broadcast scalar predicate reads the predicate itself and copies the operand
  // it picks. False (nothing set) otherwise.
  bool scalar_predicate(const Node& node, Instr& compute) {
    if (node.op != OpKind::select) return false;
    int32_t predicate = broadcast_scalar(node.inputs[0]);
    if (predicate < 0 || graph_.node(predicate).dtype != DType::boolean) return false;
    compute.run = select_scalar_instr(node.dtype);
    compute.node = predicate;
    if (node.dtype == DType::f32) compute.code = CodeOp::select;
    compute.b = operand(node.inputs[1]);
    compute.c = operand(node.inputs[2]);
    return true;
  }

  void emit(const Instr& instr) { instructions.push_back(instr); }

  // A contiguous load or store's machine-code op: `f32` or `bf16` by the buffer's dtype, or none.
  static CodeOp contiguous_code(DType dtype, CodeOp f32, CodeOp bf16) {
    if (dtype == DType::f32) return f32;
    return dtype == DType::bf16 ? bf16 : CodeOp::none;
  }

  static Instr store_of(const Node& node, int32_t id, int32_t value) {
    Instr store = instruction(store_instr(node.dtype));
    store.a = value;
    store.node = id;
    store.code = contiguous_code(node.dtype, CodeOp::store, CodeOp::store_bf16);
    return store;
  }

  // An f32 store of `value` rounded to `through` (store_rounded_instr).
  static Instr store_rounded_of(int32_t id, int32_t value, DType through) {
    Instr store = instruction(store_rounded_instr(through));
    store.a = value;
    store.node = id;
    if (through == DType::bf16) store.code = CodeOp::store_rounded_bf16;
    return store;
  }

  // A sum over leading axes: its accumulators take `columns` slots of the thread state.
  void emit_column_sum(const Node& node, int32_t id, int64_t columns) {
    Instr sum = instruction(column_sum_instr(node));
    sum.a = operand(node.inputs[0]);
    sum.node = id;
    sum.slot = next_slot_;
    sum.columns = columns;
    sum.combine = column_sum_combine(node);
    next_slot_ += static_cast<int32_t>(columns);
    emit(sum);
  }

  // Linear scan: an instruction's result takes a free register before its operands' registers
  // are freed (a result may be wider than an operand it overwrites).
  void allocate_registers() {
    std::vector<size_t> last_use(static_cast<size_t>(virtual_count_), 0);
    for (size_t i = 0; i < instructions.size(); ++i) {
      for (int32_t r : {instructions[i].a, instructions[i].b, instructions[i].c}) {
        if (r >= 0) last_use[static_cast<size_t>(r)] = i;
      }
    }
    std::vector<int32_t> physical(static_cast<size_t>(virtual_count_), -1);
    std::vector<int32_t> free;
    std::vector<bool> freed(static_cast<size_t>(virtual_count_), false);
    auto take = [&](int32_t r) {
      if (free.empty()) {
        physical[static_cast<size_t>(r)] = registers++;
      } else {
        physical[static_cast<size_t>(r)] = free.back();
        free.pop_back();
      }
    };
    // Aliases are a load's own register, never free for a result.
    auto release = [&](int32_t physical_register) {
      if (physical_register < kAliasBase) free.push_back(physical_register);
    };
    for (size_t i = 0; i < instructions.size(); ++i) {
      Instr& instr = instructions[i];
      if (instr.c >= 0 && physical[static_cast<size_t>(instr.c)] < 0) take(instr.c);  // words
      if (instr.alias >= 0) {
        physical[static_cast<size_t>(instr.out)] = kAliasBase + instr.alias;
      } else if (instr.out >= 0) {
        take(instr.out);
      }
      for (int32_t* r : {&instr.a, &instr.b, &instr.c}) {
        if (*r < 0) continue;
        auto v = static_cast<size_t>(*r);
        *r = physical[v];
        // Freed once, also when the instruction reads it twice (x * x).
        if (last_use[v] == i && !freed[v]) {
          freed[v] = true;
          release(*r);
        }
      }
      if (instr.out >= 0) {
        int32_t v = instr.out;
        instr.out = physical[static_cast<size_t>(v)];
        if (last_use[static_cast<size_t>(v)] < i) release(instr.out);  // never read
      }
    }
  }

  const Graph& graph_;
  std::unordered_set<int32_t> computed_, in_place_;
  std::unordered_map<int32_t, int32_t> register_of_;  // value -> virtual register
  int32_t virtual_count_ = 0;
  int32_t aliases_ = 0;
  int32_t next_slot_ = kFoldedSlot + 1;
  int64_t domain_ = 0, width_ = 0;
};

// A program compiled to machine code, run on each thread's range of the index space.
Kernel compiled_kernel(const Graph& graph, std::shared_ptr<const LoopCode> code, int64_t domain) {
  std::vector<int64_t> element_bytes;  // of each buffer the code points to
  for (int32_t id : code->buffers()) {
    element_bytes.push_back(static_cast<int64_t>(dtype_size(graph.node(id).dtype)));
  }
  Kernel kernel{[=](const Buffers& buffers, std::byte*) {
    parallel_for(domain, kGrain, [&](int64_t begin, int64_t end) {
      std::array<const void*, kMaxCodeBuffers> pointers{};
      std::array<const void*, kMaxCodeScalars> scalars{};
      for (size_t k = 0; k < code->buffers().size(); ++k) {
        pointers[k] = buffers.at<std::byte>(code->buffers()[k]) + begin * element_bytes[k];
      }
      for (size_t k = 0; k < code->scalars().size(); ++k) {
        scalars[k] = buffers.at<std::byte>(code->scalars()[k]);
      }
      code->run({pointers.data(), scalars.data(), end - begin});
    });
  }};
  kernel.compiled = true;
  return kernel;
}

}  // namespace

Kernel make_loop_kernel(const Graph& graph, const KernelGroup& group) {
  ProgramBuilder builder(graph, group);
  std::vector<Instr> program = std::move(builder.instructions);
  int64_t domain = builder.domain(), width = builder.width();
  if (std::shared_ptr<const LoopCode> code =
          compile_loop_code(program, builder.registers, builder.aliases())) {
    return compiled_kernel(graph, std::move(code), domain);
  }
  int64_t register_bytes = builder.registers * kRegisterBytes;
  int64_t alias_bytes = whole_lines(builder.aliases() * int64_t{8});
  int64_t per_thread = register_bytes + alias_bytes;
  int64_t state_bytes = whole_lines(builder.slots() * 8);
  int threads = kernel_threads();
  // Blocks hold whole rows when rows are short.
  int64_t step = width > 0 && width <= kBlock ? kBlock / width * width : kBlock;
  // One long row (a whole-tensor reduction, such as a gradient's sum of squares) is split across
  // the units rather than left to one; other reduced rows stay whole in a unit.
  bool split_row = width > 0 && width == domain && domain >= 2 * kGrain && threads > 1;
  bool whole_rows = width > 0 && !split_row;
  int64_t items = whole_rows ? domain / width : domain;
  // A unit of a column sum adds at least kRowsPerColumnSum rows: each unit's accumulators are
  // zeroed and added up after the loop (BERT's position-embedding gradient, 16 rows of 16,384
  // columns, in 16 units: 0.08 -> 0.31 ms).
  constexpr int64_t kRowsPerColumnSum = 8;
  int64_t columns = 0;
  for (const Instr& instr : program) columns = std::max(columns, instr.columns);
  int64_t units = parallel_units(
      items, whole_rows ? grain_for(width) : std::max(kGrain, kRowsPerColumnSum * columns));
  return {[=](const Buffers& buffers, std::byte* scratch) {
    const UnitStates states{scratch + threads * per_thread, state_bytes, units};
    for (int64_t u = 0; u < units; ++u) {
      states.of(u)[kErrorSlot] = 0;
      states.of(u)[kFoldedSlot] = 0;
      for (const Instr& instr : program) {  // column sums start at 0 (0.0 and 0 alike)
        if (instr.columns > 0) std::fill_n(states.of(u) + instr.slot, instr.columns, 0);
      }
    }
    auto body = [&](int64_t unit, int64_t begin, int64_t end) {
      std::byte* mine = scratch + omp_get_thread_num() * per_thread;
      BlockContext block{&buffers, mine, states.of(unit), 0, 0, width, split_row, begin,
                         reinterpret_cast<std::byte**>(mine + register_bytes)};
      if (split_row) block.state[kFoldedSlot] = 1;
      for (int64_t at = begin; at < end; at += step) {
        block.begin = at;
        block.count = std::min(step, end - at);
        for (const Instr& instr : program) instr.run(instr, block);
      }
    };
    if (whole_rows) {
      parallel_for_units(items, units, [&](int64_t unit, int64_t first, int64_t last) {
        body(unit, first * width, last * width);
      });
    } else {
      parallel_for_units(items, units, body);
    }
    for (const Instr& instr : program) {  // a split row's parts, column sums' units
      if (instr.combine != nullptr && (split_row || instr.columns > 0)) {
        instr.combine(instr, buffers, states);
      }
    }
    for (int64_t u = 0; u < units; ++u) {
      check(states.of(u)[kErrorSlot] == 0, "div", "integer division by zero");
    }
  }, threads * per_thread + units * state_bytes};
}

}  // namespace kiln::cpu
