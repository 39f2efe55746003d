// bf16 units, as oneDNN sees them after cap_onednn_isa(): its effective ISA honours
// KILN_MAX_CPU_ISA and ONEDNN_MAX_CPU_ISA, so a capped run on a bigger CPU takes the path of a
// smaller one.
#include "kiln/backends/cpu/bf16_products.h"

#include <cmath>
#include <iostream>
#include <mutex>
#include <oneapi/dnnl/dnnl.h>

#include "kiln/backends/cpu/cpu_isa.h"
#include "kiln/backends/cpu/unit_throughput.h"

namespace kiln::cpu {
namespace {

// vdpbf16ps does two products per f32 lane, an FMA one: it does twice the FMAs' work where it
// issues as often (AMD Zen 4 and 5, by the instruction tables). Intel's cores issue it half as
// often as FMAs: a Sapphire Rapids capped at avx512_core_bf16 measures 0.51x the FMAs' FLOP/s,
// and --bf16 there ran 0.69-0.81x fp32's speed on BERT tiny to base. At equal rates, packing the
// operands into bf16 pairs still costs: the fused attention ran 1.12x slower on vdpbf16ps than
// on FMAs. An earlier rule timed both units at start-up and took vdpbf16ps from 1.5x the FMAs'
// rate, but a timing on 2 vCPUs that share a core moves with the other's load, so two processes
// could take different paths; the vendor gives the same answer.

// Iterations of each kernel: about 10 ms of vdpbf16ps at half the FMA rate on a 3 GHz core.
constexpr long kProbeIterations = 1'000'000;

bool onednn_isa_has(dnnl_cpu_isa_t level) {
  cap_onednn_isa();
  // Each level's bits include those of the levels below it (dnnl_types.h).
  const auto isa = static_cast<unsigned>(dnnl_get_effective_cpu_isa());
  const auto bits = static_cast<unsigned>(level);
  return (isa & bits) == bits;
}

}  // namespace

VectorUnitRates vector_unit_rates() {
  static const VectorUnitRates rates = [] {
    VectorUnitRates measured;
    if (detected_cpu_isa() < CpuIsa::avx512_core_bf16) return measured;
    measured.fma_gflops = best_gflops(zmm_fma_kernel(), 1, kProbeIterations);
    measured.bf16_dot_gflops = best_gflops(zmm_bf16_dot_kernel(), 1, kProbeIterations);
    return measured;
  }();
  return rates;
}

bool vdpbf16ps_pays(const CpuFeatures& features) { return features.avx512_bf16 && features.amd; }

bool cpu_has_bf16_products() {
  if (onednn_isa_has(dnnl_cpu_isa_avx512_core_amx)) return true;
  return onednn_isa_has(dnnl_cpu_isa_avx512_core_bf16) && vdpbf16ps_pays(detected_cpu_features());
}

void print_bf16_rounding_notice_once() {
  static std::once_flag printed;
  std::call_once(printed, [] {
    std::cerr << "kiln: ";
    if (onednn_isa_has(dnnl_cpu_isa_avx512_core_bf16)) {
      VectorUnitRates rates = vector_unit_rates();
      std::cerr << "this CPU's bf16 units are slow (" << onednn_cpu_isa() << ": vdpbf16ps "
                << std::lround(rates.bf16_dot_gflops) << " GFLOP/s a core, fp32 FMAs "
                << std::lround(rates.fma_gflops) << ")";
    } else {
      std::cerr << "this CPU has no bf16 units (" << onednn_cpu_isa() << ")";
    }
    std::cerr << "; --bf16 rounds to bf16 and multiplies in fp32" << std::endl;
  });
}

}  // namespace kiln::cpu
