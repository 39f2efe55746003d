// The instruction sets Kiln's CPU kernels use: the best this CPU and its OS support, capped by the
// environment variable KILN_MAX_CPU_ISA (oneDNN's names, as ONEDNN_MAX_CPU_ISA), which caps
// oneDNN's matrix multiplies too. KILN_MAX_CPU_ISA=avx2 makes the CPU backend run as on an
// AVX2-only CPU (AMD Zen 3), so that a bigger machine can test those paths.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kiln::cpu {

// Ordered: each level includes the ones before it. Named as oneDNN names them (cpu_isa_name).
enum class CpuIsa : uint8_t {
  baseline,          // x86-64 without AVX2 (named "sse41", oneDNN's lowest level)
  avx2,              // x86-64-v3: AVX2, FMA, BMI1, BMI2, F16C, LZCNT, MOVBE
  avx512_core,       // x86-64-v4: AVX-512 F, BW, CD, DQ, VL
  avx512_core_bf16,  // and AVX512_BF16
  avx512_core_amx,   // and AMX (TILE, BF16, INT8), which Linux lets the process use
};

std::string_view cpu_isa_name(CpuIsa isa);

// What cpuid, XGETBV (the register states the OS saves) and Linux say, as far as the levels need.
struct CpuFeatures {
  bool x86_64_v3 = false;      // every instruction set of the avx2 level
  bool x86_64_v4 = false;      // every AVX-512 set of the avx512_core level
  bool avx512_bf16 = false;
  bool amx = false;            // AMX-TILE, AMX-BF16 and AMX-INT8
  uint64_t os_state = 0;       // XCR0
  bool amx_permitted = false;  // arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) succeeded
  bool amd = false;            // the vendor string is "AuthenticAMD"
};

// This CPU's (asks Linux for the AMX permission where the CPU has AMX, as oneDNN does).
CpuFeatures read_cpu_features();
// The highest level whose instructions the CPU has and whose registers the OS saves.
CpuIsa best_cpu_isa(const CpuFeatures& features);
// read_cpu_features(), read once.
const CpuFeatures& detected_cpu_features();
// best_cpu_isa(detected_cpu_features()).
CpuIsa detected_cpu_isa();

inline constexpr char kMaxCpuIsaVariable[] = "KILN_MAX_CPU_ISA";

// A value of KILN_MAX_CPU_ISA: a level's name in any case, or empty / "default" for no cap
// (nullopt). Anything else is an Error naming the variable and listing the accepted values.
std::optional<CpuIsa> parse_cpu_isa_cap(std::string_view value);
// KILN_MAX_CPU_ISA's cap, read once (an Error while its value is unknown).
std::optional<CpuIsa> cpu_isa_cap();

// min(cap, detected): a cap above what the CPU has leaves the CPU's best.
CpuIsa capped_cpu_isa(CpuIsa detected, std::optional<CpuIsa> cap);
// What Kiln's kernels use: capped_cpu_isa(detected_cpu_isa(), cpu_isa_cap()).
CpuIsa effective_cpu_isa();

// The variant of Kiln's own kernels (loops, reductions, random bits) built from now on: the
// effective ISA's, up to the widest variant the build has (avx512_core with GCC; baseline only
// with other compilers).
CpuIsa loop_kernel_isa();

// Caps oneDNN at KILN_MAX_CPU_ISA, or at the lower of it and ONEDNN_MAX_CPU_ISA where the user set
// both (oneDNN reads its own variable when KILN_MAX_CPU_ISA is unset). Must run before oneDNN's
// first primitive; the CPU backend calls it when it is made. Later calls do nothing.
void cap_onednn_isa();
// The instruction set oneDNN's kernels use (its name for it), after cap_onednn_isa().
std::string onednn_cpu_isa();

}  // namespace kiln::cpu
