// The instruction sets of the CPU backend (cpu_isa.h): KILN_MAX_CPU_ISA's values (any case, the
// error for an unknown one), the cap as min(cap, detected), the level a CPU's features give, and
// that the ISA in use, the loop kernels' variant and oneDNN's ISA follow the environment this test
// runs under (tests/CMakeLists.txt runs it again under caps).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "kiln/backends/cpu/cpu_isa.h"
#include "kiln/backends/cpu/isa_variants.h"
#include "kiln/ir/error.h"

namespace kiln::cpu {
namespace {

constexpr CpuIsa kAll[] = {CpuIsa::baseline, CpuIsa::avx2, CpuIsa::avx512_core,
                           CpuIsa::avx512_core_bf16, CpuIsa::avx512_core_amx};

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

TEST(CpuIsa, CapNamesAreOnednnsInAnyCase) {
  EXPECT_EQ(parse_cpu_isa_cap("sse41"), CpuIsa::baseline);
  EXPECT_EQ(parse_cpu_isa_cap("avx2"), CpuIsa::avx2);
  EXPECT_EQ(parse_cpu_isa_cap("AVX512_CORE"), CpuIsa::avx512_core);
  EXPECT_EQ(parse_cpu_isa_cap("Avx512_Core_Bf16"), CpuIsa::avx512_core_bf16);
  EXPECT_EQ(parse_cpu_isa_cap("avx512_core_AMX"), CpuIsa::avx512_core_amx);
  for (CpuIsa isa : kAll) EXPECT_EQ(parse_cpu_isa_cap(cpu_isa_name(isa)), isa);
}

TEST(CpuIsa, UnsetOrDefaultIsNoCap) {
  EXPECT_EQ(parse_cpu_isa_cap(""), std::nullopt);
  EXPECT_EQ(parse_cpu_isa_cap("default"), std::nullopt);
  EXPECT_EQ(parse_cpu_isa_cap("DEFAULT"), std::nullopt);
}

TEST(CpuIsa, UnknownCapNamesTheVariableAndTheValues) {
  for (const char* value : {"avx3", "avx512", " avx2", "avx2_vnni"}) {
    try {
      parse_cpu_isa_cap(value);
      ADD_FAILURE() << "accepted '" << value << "'";
    } catch (const Error& error) {
      std::string message = error.what();
      EXPECT_NE(message.find("[KILN_MAX_CPU_ISA]"), std::string::npos) << message;
      EXPECT_NE(message.find(std::string("'") + value + "'"), std::string::npos) << message;
      for (CpuIsa isa : kAll) {
        EXPECT_NE(message.find(cpu_isa_name(isa)), std::string::npos) << message;
      }
      EXPECT_NE(message.find("default"), std::string::npos) << message;
    }
  }
}

TEST(CpuIsa, CapLowersButNeverRaises) {
  EXPECT_EQ(capped_cpu_isa(CpuIsa::avx512_core_amx, CpuIsa::avx2), CpuIsa::avx2);
  EXPECT_EQ(capped_cpu_isa(CpuIsa::avx2, CpuIsa::avx512_core_amx), CpuIsa::avx2);
  EXPECT_EQ(capped_cpu_isa(CpuIsa::baseline, CpuIsa::avx512_core), CpuIsa::baseline);
  EXPECT_EQ(capped_cpu_isa(CpuIsa::avx512_core_bf16, std::nullopt), CpuIsa::avx512_core_bf16);
  EXPECT_EQ(capped_cpu_isa(CpuIsa::avx512_core_amx, CpuIsa::baseline), CpuIsa::baseline);
}

TEST(CpuIsa, LevelNeedsTheInstructionsAndTheOsState) {
  constexpr uint64_t kYmm = 0x6, kZmm = 0xe0, kTiles = 0x60000;
  CpuFeatures all{true, true, true, true, kYmm | kZmm | kTiles, true};
  EXPECT_EQ(best_cpu_isa(all), CpuIsa::avx512_core_amx);
  CpuFeatures f = all;
  f.amx_permitted = false;
  EXPECT_EQ(best_cpu_isa(f), CpuIsa::avx512_core_bf16);
  f = all;
  f.os_state = kYmm | kZmm;  // tiles not saved by the OS
  EXPECT_EQ(best_cpu_isa(f), CpuIsa::avx512_core_bf16);
  f = all;
  f.amx = false;
  EXPECT_EQ(best_cpu_isa(f), CpuIsa::avx512_core_bf16);
  f.avx512_bf16 = false;
  EXPECT_EQ(best_cpu_isa(f), CpuIsa::avx512_core);
  f.os_state = kYmm;  // AVX-512 instructions, but the OS does not save zmm registers
  EXPECT_EQ(best_cpu_isa(f), CpuIsa::avx2);
  f = all;
  f.x86_64_v4 = false;  // Zen 3
  EXPECT_EQ(best_cpu_isa(f), CpuIsa::avx2);
  f.os_state = 0;
  EXPECT_EQ(best_cpu_isa(f), CpuIsa::baseline);
  f = all;
  f.x86_64_v3 = false;
  EXPECT_EQ(best_cpu_isa(f), CpuIsa::baseline);
  EXPECT_EQ(best_cpu_isa(CpuFeatures{}), CpuIsa::baseline);
}

// The vendor against Linux's reading of cpuid.
TEST(CpuIsa, DetectionReadsThisCpu) {
  EXPECT_EQ(detected_cpu_isa(), best_cpu_isa(read_cpu_features()));
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line) && line.rfind("vendor_id", 0) != 0) {
  }
  ASSERT_EQ(line.rfind("vendor_id", 0), 0u) << "no vendor_id in /proc/cpuinfo";
  EXPECT_EQ(detected_cpu_features().amd, line.find("AuthenticAMD") != std::string::npos) << line;
}

// Under KILN_MAX_CPU_ISA (unset in the plain suite; tests/CMakeLists.txt and .ci/run set it).
TEST(CpuIsa, KernelsAndOnednnFollowTheCap) {
  std::optional<CpuIsa> cap = parse_cpu_isa_cap(environment(kMaxCpuIsaVariable));
  const CpuIsa effective = capped_cpu_isa(detected_cpu_isa(), cap);
  EXPECT_EQ(cpu_isa_cap(), cap);
  EXPECT_EQ(effective_cpu_isa(), effective);
  EXPECT_EQ(loop_kernel_isa(),
            KILN_ISA_VARIANTS ? std::min(effective, CpuIsa::avx512_core) : CpuIsa::baseline);
  std::string onednn = onednn_cpu_isa();
  if (cap) {  // the lower of the two caps (ONEDNN_MAX_CPU_ISA, if set, is one of Kiln's names here)
    std::optional<CpuIsa> onednn_cap = parse_cpu_isa_cap(environment("ONEDNN_MAX_CPU_ISA"));
    EXPECT_EQ(onednn, cpu_isa_name(capped_cpu_isa(effective, onednn_cap)));
  } else {
    EXPECT_EQ(onednn.find("oneDNN cpu_isa"), std::string::npos) << onednn;  // a named level
  }
}

}  // namespace
}  // namespace kiln::cpu
