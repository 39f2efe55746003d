// Internal: Kiln's own kernels compiled once per instruction set and chosen when a kernel is built,
// from effective_cpu_isa() (cpu_isa.h), so that KILN_MAX_CPU_ISA caps them.
//
// A file of kernels is written once, without target attributes, as a body (NAME.inc) that
// isa_variants.inc includes in three namespaces: isa_baseline as the build targets (x86-64),
// isa_avx2 under `#pragma GCC target("arch=x86-64-v3")` and isa_avx512 under "arch=x86-64-v4".
// The including file includes every header the body uses first, so that what the body does not
// define itself (std::, typed.h, ...) stays baseline code: a template first instantiated under the
// pragma would otherwise be AVX-512 code under a shared (COMDAT) name, which the linker could hand
// to every caller, on any CPU. The body's own templates are distinct per namespace.
//
//   #define KILN_ISA_BODY "kiln/backends/cpu/loop_ops.inc"
//   #include "kiln/backends/cpu/isa_variants.inc"
//   InstrFn load_instr(DType dtype) { return KILN_ISA_DISPATCH(load_instr(dtype)); }
#pragma once

#include "kiln/backends/cpu/cpu_isa.h"

// GCC builds the three; clang 14 (the fuzz build) the baseline only.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define KILN_ISA_VARIANTS 1
#else
#define KILN_ISA_VARIANTS 0
#endif

// `call` (a function of the body with its arguments) in the variant loop_kernel_isa() names.
#if KILN_ISA_VARIANTS
#define KILN_ISA_DISPATCH(call)                                                            \
  (::kiln::cpu::loop_kernel_isa() == ::kiln::cpu::CpuIsa::avx512_core ? isa_avx512::call   \
   : ::kiln::cpu::loop_kernel_isa() == ::kiln::cpu::CpuIsa::avx2      ? isa_avx2::call     \
                                                                       : isa_baseline::call)
#else
#define KILN_ISA_DISPATCH(call) isa_baseline::call
#endif
