// Detects the CPU's instruction sets (cpuid, XGETBV, Linux's AMX permission), reads
// KILN_MAX_CPU_ISA and hands the cap to oneDNN.
#include "kiln/backends/cpu/cpu_isa.h"

#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <initializer_list>

#include "kiln/backends/cpu/isa_variants.h"
#include "kiln/ir/error.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace kiln::cpu {
namespace {

constexpr std::array<std::string_view, 5> kIsaNames = {"sse41", "avx2", "avx512_core",
                                                       "avx512_core_bf16", "avx512_core_amx"};

// XCR0 bits: the SSE and AVX halves of the ymm registers; the AVX-512 mask registers and the upper
// halves and upper 16 of the zmm registers; the AMX tile configuration and data.
constexpr uint64_t kYmmState = 0x6, kZmmState = 0xe0, kTileState = 0x60000;

std::string lowercase(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view environment(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

#if defined(__x86_64__)
struct CpuidRegisters {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
};

// Zeros for a leaf the CPU does not have.
CpuidRegisters cpuid(unsigned leaf, unsigned subleaf) {
  CpuidRegisters r;
  if (!__get_cpuid_count(leaf, subleaf, &r.eax, &r.ebx, &r.ecx, &r.edx)) return {};
  return r;
}

bool has_bits(unsigned reg, std::initializer_list<int> bits) {
  return std::all_of(bits.begin(), bits.end(), [reg](int bit) { return (reg >> bit) & 1u; });
}

uint64_t xcr0() {
  unsigned low = 0, high = 0;
  asm volatile("xgetbv" : "=a"(low), "=d"(high) : "c"(0));
  return (uint64_t{high} << 32) | low;
}
#endif

// oneDNN's levels as its cpu_isa masks, each holding the bits of those it includes.
struct OnednnLevel {
  std::string_view name;
  unsigned mask;
};
constexpr std::array<OnednnLevel, 10> kOnednnLevels = {{
    {"sse41", dnnl_cpu_isa_sse41},
    {"avx", dnnl_cpu_isa_avx},
    {"avx2", dnnl_cpu_isa_avx2},
    {"avx2_vnni", dnnl_cpu_isa_avx2_vnni},
    {"avx512_mic", dnnl_cpu_isa_avx512_mic},
    {"avx512_mic_4ops", dnnl_cpu_isa_avx512_mic_4ops},
    {"avx512_core", dnnl_cpu_isa_avx512_core},
    {"avx512_core_vnni", dnnl_cpu_isa_avx512_core_vnni},
    {"avx512_core_bf16", dnnl_cpu_isa_avx512_core_bf16},
    {"avx512_core_amx", dnnl_cpu_isa_avx512_core_amx},
}};

std::optional<unsigned> onednn_mask(std::string_view name) {
  std::string key = lowercase(name);
  for (const OnednnLevel& level : kOnednnLevels) {
    if (level.name == key) return level.mask;
  }
  return std::nullopt;
}

// The cap the user gave oneDNN itself: its first variable that is set (oneDNN ignores an unknown
// value, and so does this).
std::optional<unsigned> user_onednn_mask() {
  for (const char* variable : {"ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA"}) {
    std::string_view value = environment(variable);
    if (!value.empty()) return onednn_mask(value);
  }
  return std::nullopt;
}

}  // namespace

std::string_view cpu_isa_name(CpuIsa isa) { return kIsaNames[static_cast<size_t>(isa)]; }

CpuFeatures read_cpu_features() {
  CpuFeatures features;
#if defined(__x86_64__)
  CpuidRegisters leaf1 = cpuid(1, 0), leaf7 = cpuid(7, 0), extended = cpuid(0x80000001, 0);
  CpuidRegisters leaf7_1 = leaf7.eax >= 1 ? cpuid(7, 1) : CpuidRegisters{};
  constexpr int kFma = 12, kMovbe = 22, kOsxsave = 27, kAvx = 28, kF16c = 29;  // leaf 1, ecx
  constexpr int kBmi1 = 3, kAvx2 = 5, kBmi2 = 8;                                 // leaf 7, ebx
  constexpr int kAvx512f = 16, kAvx512dq = 17, kAvx512cd = 28, kAvx512bw = 30, kAvx512vl = 31;
  constexpr int kAmxBf16 = 22, kAmxTile = 24, kAmxInt8 = 25;  // leaf 7, edx
  constexpr int kAvx512Bf16 = 5;                              // leaf 7 subleaf 1, eax
  constexpr int kLzcnt = 5;                                   // leaf 0x80000001, ecx
  features.x86_64_v3 = has_bits(leaf1.ecx, {kFma, kMovbe, kAvx, kF16c}) &&
                       has_bits(leaf7.ebx, {kBmi1, kAvx2, kBmi2}) &&
                       has_bits(extended.ecx, {kLzcnt});
  features.x86_64_v4 = has_bits(leaf7.ebx, {kAvx512f, kAvx512dq, kAvx512cd, kAvx512bw, kAvx512vl});
  features.avx512_bf16 = has_bits(leaf7_1.eax, {kAvx512Bf16});
  features.amx = has_bits(leaf7.edx, {kAmxBf16, kAmxTile, kAmxInt8});
  if (has_bits(leaf1.ecx, {kOsxsave})) features.os_state = xcr0();
  CpuidRegisters vendor = cpuid(0, 0);  // "AuthenticAMD" in ebx, edx, ecx
  features.amd = vendor.ebx == 0x68747541 && vendor.edx == 0x69746e65 && vendor.ecx == 0x444d4163;
  if (features.amx && (features.os_state & kTileState) == kTileState) {
    constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
    features.amx_permitted = syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
  }
#endif
  return features;
}

CpuIsa best_cpu_isa(const CpuFeatures& f) {
  auto saved = [&](uint64_t state) { return (f.os_state & state) == state; };
  if (!f.x86_64_v3 || !saved(kYmmState)) return CpuIsa::baseline;
  if (!f.x86_64_v4 || !saved(kZmmState)) return CpuIsa::avx2;
  if (!f.avx512_bf16) return CpuIsa::avx512_core;
  if (!f.amx || !saved(kTileState) || !f.amx_permitted) return CpuIsa::avx512_core_bf16;
  return CpuIsa::avx512_core_amx;
}

const CpuFeatures& detected_cpu_features() {
  static const CpuFeatures features = read_cpu_features();
  return features;
}

CpuIsa detected_cpu_isa() {
  static const CpuIsa isa = best_cpu_isa(detected_cpu_features());
  return isa;
}

std::optional<CpuIsa> parse_cpu_isa_cap(std::string_view value) {
  std::string name = lowercase(value);
  if (name.empty() || name == "default") return std::nullopt;
  for (size_t i = 0; i < kIsaNames.size(); ++i) {
    if (kIsaNames[i] == name) return static_cast<CpuIsa>(i);
  }
  std::string accepted = "default";
  for (std::string_view known : kIsaNames) accepted.append(", ").append(known);
  fail(kMaxCpuIsaVariable, "unknown instruction set '", value, "'; expected one of ", accepted,
       " (any case)");
}

std::optional<CpuIsa> cpu_isa_cap() {
  static const std::optional<CpuIsa> cap = parse_cpu_isa_cap(environment(kMaxCpuIsaVariable));
  return cap;
}

CpuIsa capped_cpu_isa(CpuIsa detected, std::optional<CpuIsa> cap) {
  return cap ? std::min(detected, *cap) : detected;
}

CpuIsa effective_cpu_isa() {
  static const CpuIsa isa = capped_cpu_isa(detected_cpu_isa(), cpu_isa_cap());
  return isa;
}

CpuIsa loop_kernel_isa() {
#if KILN_ISA_VARIANTS
  return std::min(effective_cpu_isa(), CpuIsa::avx512_core);
#else
  return CpuIsa::baseline;
#endif
}

void cap_onednn_isa() {
  // Levels are nested bit sets, so the lower of two caps is their intersection.
  static const bool capped = [] {
    std::optional<CpuIsa> cap = cpu_isa_cap();
    if (!cap) return false;
    unsigned mask = *onednn_mask(cpu_isa_name(*cap)) & user_onednn_mask().value_or(~0u);
    dnnl_status_t status = dnnl_set_max_cpu_isa(static_cast<dnnl_cpu_isa_t>(mask));
    check(status == dnnl_success, kMaxCpuIsaVariable, "oneDNN refused the cap ",
          cpu_isa_name(*cap), " (status ", static_cast<int>(status),
          "): it must be set before oneDNN's first primitive");
    return true;
  }();
  (void)capped;
}

std::string onednn_cpu_isa() {
  cap_onednn_isa();
  auto mask = static_cast<unsigned>(dnnl_get_effective_cpu_isa());
  for (const OnednnLevel& level : kOnednnLevels) {
    if (level.mask == mask) return std::string(level.name);
  }
  return "oneDNN cpu_isa " + std::to_string(mask);
}

}  // namespace kiln::cpu
