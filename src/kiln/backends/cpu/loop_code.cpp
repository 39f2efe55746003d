// Loop programs as machine code (loop_code.h), emitted with Xbyak (the JIT assembler oneDNN uses).
// The code: the scalars broadcast once into a table on the stack, then one loop over whole vectors
// of elements and one over the elements left, each running the program's instructions on vector
// registers (one register per register or alias of the interpreted program), loads first and
// stores last as in the interpreter, so that a donated argument is read before it is overwritten.
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
// Room for the code: the prologue (a table entry per scalar, the sign mask), then each
// instruction twice (vectors, then the elements left), 27 bytes at most (a select).
size_t code_bytes(const std::vector<Instr>& program) {
  return 1024 + 32 * kMaxCodeScalars + 2 * 40 * program.size();
}

enum class Width { zmm, ymm, scalar };

class ProgramCode final : public LoopCode, private Xbyak::CodeGenerator {
 public:
  ProgramCode(const std::vector<Instr>& program, int32_t registers, int32_t aliases, Width width)
      : Xbyak::CodeGenerator(code_bytes(program)), program_(program),
        temporary_index_(registers + aliases), registers_(registers), width_(width) {
    for (const Instr& instr : program_) {
      if (instr.code == CodeOp::load || instr.code == CodeOp::store) pointer_of(instr.node);
      bool reads_scalar = instr.code == CodeOp::select || instr.scalar != ScalarOperand::none;
      if (reads_scalar) slot_of(instr.node);
      if (instr.code == CodeOp::neg) needs_sign_ = true;
    }
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
  // Table slots: the scalars in order, then the sign mask.
  int sign_slot() const { return static_cast<int>(scalars_.size()); }
  Xbyak::Address slot(int index) { return ptr[rsp + index * kTableSlotBytes]; }
  Xbyak::Address scalar_slot(int index) { return dword[rsp + index * kTableSlotBytes]; }

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

  int vector_bytes() const { return width_ == Width::zmm ? 64 : 32; }

  void emit() {
    const int slots = static_cast<int>(scalars_.size()) + (needs_sign_ ? 1 : 0);
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
    if (needs_sign_) {
      for (int lane = 0; lane < kTableSlotBytes / 4; ++lane) {
        mov(dword[rsp + sign_slot() * kTableSlotBytes + lane * 4], 0x80000000u);
      }
    }
    mov(rax, qword[rdi + offsetof(LoopCodeArguments, pointers)]);
    for (size_t k = 0; k < buffers_.size(); ++k) mov(pointer(buffers_[k]), qword[rax + k * 8]);
    mov(rdx, qword[rdi + offsetof(LoopCodeArguments, count)]);
    shl(rdx, 2);  // bytes
    mov(rcx, rdx);
    sub(rcx, vector_bytes());  // the last offset a whole vector starts at
    xor_(eax, eax);
    Xbyak::Label vectors, tail, done;
    L(vectors);
    cmp(rax, rcx);
    jg(tail, T_NEAR);
    body(width_);
    add(rax, vector_bytes());
    jmp(vectors, T_NEAR);
    L(tail);
    cmp(rax, rdx);
    jge(done, T_NEAR);
    body(Width::scalar);
    add(rax, 4);
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
          Xbyak::RegExp at = pointer(instr.node) + rax;
          if (one) {
            vmovss(vector(instr.out, width), dword[at]);
          } else {
            prefetcht0(ptr[at + kPrefetchBytes]);
            vmovups(vector(instr.out, width), ptr[at]);
          }
          break;
        }
        case CodeOp::store: {
          Xbyak::RegExp at = pointer(instr.node) + rax;
          if (one) vmovss(dword[at], vector(instr.a, width));
          else vmovups(ptr[at], vector(instr.a, width));
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
          vxorps(vector(instr.out, width), vector(instr.a, width), slot(sign_slot()));
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
  bool needs_sign_ = false;
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
  if (registers + aliases + 1 > vector_registers) return nullptr;  // + the temporary
  auto code = std::make_unique<ProgramCode>(program, registers, aliases, width);
  if (!code->compile()) return nullptr;
  return code;
}

}  // namespace kiln::cpu
