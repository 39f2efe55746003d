// Loop programs as machine code (loop_code.h), emitted with Xbyak (the JIT assembler oneDNN uses).
// The code: the scalars and constants broadcast once into a table on the stack, then one loop over
// whole vectors of elements and one over the elements left, each running the program's
// instructions on vector registers (one register per register or alias of the interpreted
// program), loads first and stores last as in the interpreter, so that a donated argument is read
// before it is overwritten. bf16 values are f32 in registers: loads widen them, and stores and
// casts to bf16 round to nearest even with integer arithmetic, a NaN kept a NaN, as round_bf16 of
// typed.h does (vcvtneps2bf16 would flush subnormals).
#include "kiln/backends/cpu/loop_code.h"

#include <xbyak/xbyak.h>

#include <algorithm>
#include <cstddef>

#include "kiln/backends/cpu/cpu_isa.h"

namespace kiln::cpu {
namespace {

// General-purpose registers for the buffers' pointers (the rest hold the arguments, the element
// offset and the loop bounds).
constexpr int kPointerRegisters = kMaxCodeBuffers;
constexpr int kTableSlotBytes = 64;  // a scalar broadcast to a whole zmm register
// Each vector load asks for the bytes this far ahead of it. KILN_CPU_PROFILE, BERT-tiny's word
// embeddings' AdamW (7 streams of 16 MB), alternated: none 2.34/2.26 ms, 512 bytes 2.02/2.03, 1024
// 1.96/1.93, 2048 2.00/1.96 (--bf16); under the avx2 cap none 2.24/2.28, 1024 1.98/1.95.
constexpr int kPrefetchBytes = 1024;
// Room for the code: the prologue (a table entry per scalar and per constant), then each
// instruction twice (vectors, then the elements left), under 80 bytes (a store rounding to bf16
// under AVX2, the longest).
size_t code_bytes(const std::vector<Instr>& program) {
  return 2048 + 32 * kMaxCodeScalars + 2 * 80 * program.size();
}

// The constants of neg and of rounding to bf16, each a dword spread over a table slot.
constexpr uint32_t kSignBit = 0x80000000u, kRoundingBias = 0x7FFFu, kLowestKeptBit = 1u,
                   kQuietBit = 0x00400000u;

enum class Width { zmm, ymm, scalar };

bool rounds_to_bf16(CodeOp code) {
  return code == CodeOp::store_bf16 || code == CodeOp::round_bf16 ||
         code == CodeOp::store_rounded_bf16;
}

// Vector registers the code needs besides the program's: a temporary, and under AVX2 a second one
// for a store that rounds to bf16 (AVX-512 keeps its NaN lanes in a mask register instead).
int32_t temporaries(const std::vector<Instr>& program, Width width) {
  auto stores_bf16 = [](const Instr& instr) {
    return instr.code == CodeOp::store_bf16 || instr.code == CodeOp::store_rounded_bf16;
  };
  bool second = width == Width::ymm && std::any_of(program.begin(), program.end(), stores_bf16);
  return second ? 2 : 1;
}

class ProgramCode final : public LoopCode, private Xbyak::CodeGenerator {
 public:
  ProgramCode(const std::vector<Instr>& program, int32_t registers, int32_t aliases, Width width)
      : Xbyak::CodeGenerator(code_bytes(program)), program_(program),
        temporary_index_(registers + aliases), registers_(registers), width_(width) {
    for (const Instr& instr : program_) {
      if (element_shift(instr.code) >= 0) pointer_of(instr.node);
      bool reads_scalar = instr.code == CodeOp::select || instr.scalar != ScalarOperand::none;
      if (reads_scalar) slot_of(instr.node);
      if (instr.code == CodeOp::neg) constants_.push_back(kSignBit);
      if (rounds_to_bf16(instr.code)) {
        constants_.insert(constants_.end(), {kRoundingBias, kLowestKeptBit, kQuietBit});
      }
    }
    std::sort(constants_.begin(), constants_.end());
    constants_.erase(std::unique(constants_.begin(), constants_.end()), constants_.end());
  }

  // Emits the code; false (nothing emitted) where the buffers' pointers outnumber the
  // general-purpose registers for them, or the scalars the arguments' room for them.
  bool compile() {
    if (static_cast<int>(buffers_.size()) > kPointerRegisters) return false;
    if (static_cast<int>(scalars_.size()) > kMaxCodeScalars) return false;
    emit();
    ready();
    function_ = getCode<void (*)(const LoopCodeArguments*)>();
    return true;
  }

  void run(const LoopCodeArguments& arguments) const override { function_(&arguments); }
  const std::vector<int32_t>& buffers() const override { return buffers_; }
  const std::vector<int32_t>& scalars() const override { return scalars_; }

 private:
  int pointer_of(int32_t node) {
    auto it = std::find(buffers_.begin(), buffers_.end(), node);
    if (it != buffers_.end()) return static_cast<int>(it - buffers_.begin());
    buffers_.push_back(node);
    return static_cast<int>(buffers_.size()) - 1;
  }
  int slot_of(int32_t node) {
    auto it = std::find(scalars_.begin(), scalars_.end(), node);
    if (it != scalars_.end()) return static_cast<int>(it - scalars_.begin());
    scalars_.push_back(node);
    return static_cast<int>(scalars_.size()) - 1;
  }
  // Table slots: the scalars in order, then the constants.
  Xbyak::Address slot(int index) { return ptr[rsp + index * kTableSlotBytes]; }
  Xbyak::Address scalar_slot(int index) { return dword[rsp + index * kTableSlotBytes]; }
  Xbyak::Address constant(uint32_t value) {
    auto at = std::find(constants_.begin(), constants_.end(), value) - constants_.begin();
    return slot(static_cast<int>(scalars_.size() + static_cast<size_t>(at)));
  }

  // log2 of the bytes of an element a load or store reads or writes, or -1 for other ops.
  static int element_shift(CodeOp code) {
    if (code == CodeOp::load || code == CodeOp::store || code == CodeOp::store_rounded_bf16) {
      return 2;
    }
    return code == CodeOp::load_bf16 || code == CodeOp::store_bf16 ? 1 : -1;
  }
  // The address of the current element in the buffer a load or store names.
  Xbyak::RegExp element(const Instr& instr) {
    return pointer(instr.node) + rax * (1 << element_shift(instr.code));
  }

  Xbyak::Reg64 pointer(int32_t node) {
    using Xbyak::Operand;
    constexpr int kRegisters[kPointerRegisters] = {Operand::RSI, Operand::R8,  Operand::R9,
                                                   Operand::R10, Operand::R11, Operand::RBX,
                                                   Operand::R12, Operand::R13, Operand::R14,
                                                   Operand::R15};
    return Xbyak::Reg64(kRegisters[pointer_of(node)]);
  }

  // The vector register of a program register (aliases after the registers), and the temporary.
  Xbyak::Xmm vector_at(int index, Width width) const {
    if (width == Width::zmm) return Xbyak::Zmm(index);
    if (width == Width::ymm) return Xbyak::Ymm(index);
    return Xbyak::Xmm(index);
  }
  Xbyak::Xmm vector(int32_t r, Width width) const {
    return vector_at(r >= kAliasBase ? registers_ + (r - kAliasBase) : r, width);
  }
  Xbyak::Xmm temporary(Width width) const { return vector_at(temporary_index_, width); }
  // What rounded_bits may clobber for a store: AVX2's second temporary (unused with AVX-512).
  Xbyak::Xmm store_spare(Width width) const {
    return width_ == Width::ymm ? vector_at(temporary_index_ + 1, width) : temporary(width);
  }

  int lanes() const { return width_ == Width::zmm ? 16 : 8; }

  void emit() {
    const int slots = static_cast<int>(scalars_.size() + constants_.size());
    push(rbp);
    mov(rbp, rsp);
    for (const Xbyak::Reg64* saved : {&rbx, &r12, &r13, &r14, &r15}) push(*saved);
    and_(rsp, -kTableSlotBytes);
    sub(rsp, slots * kTableSlotBytes);
    // The table: float scalars broadcast, predicates as a dword 0 or 1, the sign mask.
    Xbyak::Xmm spread = temporary(width_);
    mov(rax, qword[rdi + offsetof(LoopCodeArguments, scalars)]);
    for (size_t k = 0; k < scalars_.size(); ++k) {
      mov(rcx, qword[rax + k * 8]);
      if (is_predicate(scalars_[k])) {
        movzx(ecx, byte[rcx]);
        mov(scalar_slot(static_cast<int>(k)), ecx);
      } else {
        vbroadcastss(spread, dword[rcx]);
        vmovups(slot(static_cast<int>(k)), spread);
      }
    }
    for (uint32_t value : constants_) {
      for (int lane = 0; lane < kTableSlotBytes / 4; ++lane) {
        mov(dword[constant(value).getRegExp() + lane * 4], value);
      }
    }
    mov(rax, qword[rdi + offsetof(LoopCodeArguments, pointers)]);
    for (size_t k = 0; k < buffers_.size(); ++k) mov(pointer(buffers_[k]), qword[rax + k * 8]);
    // rax: the element; rdx: the elements; rcx: the last element a whole vector starts at (free
    // in the loop over the elements left, whose bf16 loads and stores pass words through ecx).
    mov(rdx, qword[rdi + offsetof(LoopCodeArguments, count)]);
    mov(rcx, rdx);
    sub(rcx, lanes());
    xor_(eax, eax);
    Xbyak::Label vectors, tail, done;
    L(vectors);
    cmp(rax, rcx);
    jg(tail, T_NEAR);
    body(width_);
    add(rax, lanes());
    jmp(vectors, T_NEAR);
    L(tail);
    cmp(rax, rdx);
    jge(done, T_NEAR);
    body(Width::scalar);
    add(rax, 1);
    jmp(tail, T_NEAR);
    L(done);
    vzeroupper();
    lea(rsp, ptr[rbp - 5 * 8]);
    for (const Xbyak::Reg64* saved : {&r15, &r14, &r13, &r12, &rbx}) pop(*saved);
    pop(rbp);
    ret();
  }

  bool is_predicate(int32_t node) const {
    return std::any_of(program_.begin(), program_.end(), [&](const Instr& instr) {
      return instr.code == CodeOp::select && instr.node == node;
    });
  }

  void body(Width width) {
    const bool one = width == Width::scalar;
    for (const Instr& instr : program_) {
      switch (instr.code) {
        case CodeOp::load: {
          Xbyak::RegExp at = element(instr);
          if (one) {
            vmovss(vector(instr.out, width), dword[at]);
          } else {
            prefetcht0(ptr[at + kPrefetchBytes]);
            vmovups(vector(instr.out, width), ptr[at]);
          }
          break;
        }
        case CodeOp::store: {
          Xbyak::RegExp at = element(instr);
          if (one) vmovss(dword[at], vector(instr.a, width));
          else vmovups(ptr[at], vector(instr.a, width));
          break;
        }
        case CodeOp::load_bf16: load_bf16(instr, width); break;
        case CodeOp::store_bf16: store_bf16(instr, width); break;
        case CodeOp::store_rounded_bf16: store_rounded_bf16(instr, width); break;
        case CodeOp::round_bf16: {  // the rounded bits' low half cleared
          const Xbyak::Xmm out = vector(instr.out, width), bits = temporary(width);
          rounded_bits(bits, vector(instr.a, width), out);
          vpsrld(out, bits, 16);
          vpslld(out, out, 16);
          break;
        }
        case CodeOp::add:
        case CodeOp::sub:
        case CodeOp::mul:
        case CodeOp::div: arithmetic(instr, width); break;
        case CodeOp::sqrt:
          if (one) {
            vsqrtss(vector(instr.out, width), vector(instr.a, width), vector(instr.a, width));
          } else {
            vsqrtps(vector(instr.out, width), vector(instr.a, width));
          }
          break;
        case CodeOp::neg:
          vxorps(vector(instr.out, width), vector(instr.a, width), constant(kSignBit));
          break;
        case CodeOp::select: {  // the predicate's slot holds 0 or 1
          Xbyak::Label keep;
          vmovaps(vector(instr.out, width), vector(instr.b, width));
          cmp(scalar_slot(slot_of(instr.node)), 0);
          jne(keep);
          vmovaps(vector(instr.out, width), vector(instr.c, width));
          L(keep);
          break;
        }
        case CodeOp::none: break;  // compile_loop_code admits no such program
      }
    }
  }

  // A bf16 value's bits are the high half of its f32's.
  void load_bf16(const Instr& instr, Width width) {
    const Xbyak::Xmm out = vector(instr.out, width);
    Xbyak::RegExp at = element(instr);
    if (width == Width::scalar) {
      movzx(ecx, word[at]);
      shl(ecx, 16);
      vmovd(out, ecx);
      return;
    }
    prefetcht0(ptr[at + kPrefetchBytes]);
    vpmovzxwd(out, ptr[at]);
    vpslld(out, out, 16);
  }

  void store_bf16(const Instr& instr, Width width) {
    const Xbyak::Xmm bits = temporary(width);
    Xbyak::RegExp at = element(instr);
    rounded_bits(bits, vector(instr.a, width), store_spare(width));
    vpsrld(bits, bits, 16);
    if (width == Width::scalar) {
      vmovd(ecx, bits);
      mov(word[at], cx);
    } else if (width == Width::zmm) {
      vpmovdw(ptr[at], bits);
    } else {  // the dwords' low words, packed within each 128-bit lane, then the lanes joined
      vpackusdw(bits, bits, bits);
      vpermq(Xbyak::Ymm(bits.getIdx()), Xbyak::Ymm(bits.getIdx()), 0x08);
      vmovdqu(ptr[at], Xbyak::Xmm(bits.getIdx()));
    }
  }

  // An f32 store of the value rounded to bf16: the rounded bits' low half cleared.
  void store_rounded_bf16(const Instr& instr, Width width) {
    const Xbyak::Xmm bits = temporary(width);
    rounded_bits(bits, vector(instr.a, width), store_spare(width));
    vpsrld(bits, bits, 16);
    vpslld(bits, bits, 16);
    Xbyak::RegExp at = element(instr);
    if (width == Width::scalar) vmovss(dword[at], bits);
    else vmovups(ptr[at], bits);
  }

  // bits = x rounded to bf16 in its high half (x + 0x7FFF + the lowest kept bit), or x with its
  // quiet bit set where x is a NaN. `spare` is clobbered under AVX2 (the NaN lanes' mask); AVX-512
  // keeps that mask in k1.
  void rounded_bits(const Xbyak::Xmm& bits, const Xbyak::Xmm& x, const Xbyak::Xmm& spare) {
    constexpr uint8_t kUnordered = 3;  // vcmpps: true where either operand is a NaN
    vpsrld(bits, x, 16);
    if (width_ == Width::zmm) {
      vpandd(bits, bits, constant(kLowestKeptBit));
      vpaddd(bits, bits, x);
      vpaddd(bits, bits, constant(kRoundingBias));
      vcmpps(k1, x, x, kUnordered);
      vpord(bits | k1, x, constant(kQuietBit));
    } else {
      vpand(bits, bits, constant(kLowestKeptBit));
      vpaddd(bits, bits, x);
      vpaddd(bits, bits, constant(kRoundingBias));
      vcmpps(spare, x, x, kUnordered);
      vblendvps(bits, bits, x, spare);
      vpand(spare, spare, constant(kQuietBit));
      vpor(bits, bits, spare);
    }
  }

  // out = a op b, either operand possibly a scalar's table slot (the first then copied to the
  // temporary: the instructions take their first operand from a register).
  void arithmetic(const Instr& instr, Width width) {
    const bool one = width == Width::scalar;
    const Xbyak::Xmm out = vector(instr.out, width);
    const bool scalar_first = instr.scalar == ScalarOperand::a;
    const Xbyak::Xmm first = scalar_first ? temporary(width) : vector(instr.a, width);
    if (scalar_first) {
      int index = slot_of(instr.node);
      if (one) vmovss(first, scalar_slot(index));
      else vmovups(first, slot(index));
    }
    auto apply = [&](const Xbyak::Operand& second) {
      switch (instr.code) {
        case CodeOp::add: one ? vaddss(out, first, second) : vaddps(out, first, second); break;
        case CodeOp::sub: one ? vsubss(out, first, second) : vsubps(out, first, second); break;
        case CodeOp::mul: one ? vmulss(out, first, second) : vmulps(out, first, second); break;
        case CodeOp::div: one ? vdivss(out, first, second) : vdivps(out, first, second); break;
        default: break;
      }
    };
    if (instr.scalar != ScalarOperand::b) {
      apply(vector(instr.b, width));
    } else if (one) {
      apply(scalar_slot(slot_of(instr.node)));
    } else {
      apply(slot(slot_of(instr.node)));
    }
  }

  std::vector<Instr> program_;
  int temporary_index_;
  int32_t registers_;
  Width width_;
  std::vector<uint32_t> constants_;  // sorted
  std::vector<int32_t> buffers_, scalars_;
  void (*function_)(const LoopCodeArguments*) = nullptr;
};

}  // namespace

std::unique_ptr<const LoopCode> compile_loop_code(const std::vector<Instr>& program,
                                                  int32_t registers, int32_t aliases) {
  CpuIsa isa = loop_kernel_isa();
  if (isa < CpuIsa::avx2) return nullptr;
  auto missing = [](const Instr& instr) { return instr.code == CodeOp::none; };
  const bool any_missing = std::any_of(program.begin(), program.end(), missing);
  if (program.empty() || any_missing) return nullptr;
  Width width = isa >= CpuIsa::avx512_core ? Width::zmm : Width::ymm;
  const int32_t vector_registers = width == Width::zmm ? 32 : 16;
  if (registers + aliases + temporaries(program, width) > vector_registers) return nullptr;
  auto code = std::make_unique<ProgramCode>(program, registers, aliases, width);
  if (!code->compile()) return nullptr;
  return code;
}

}  // namespace kiln::cpu
