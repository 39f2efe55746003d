// bf16 units, as oneDNN sees them after cap_onednn_isa(): its effective ISA honours
// KILN_MAX_CPU_ISA and ONEDNN_MAX_CPU_ISA, so a capped run on a bigger CPU takes the path of a
// smaller one.
#include "kiln/backends/cpu/bf16_products.h"

#include <iostream>
#include <mutex>
#include <oneapi/dnnl/dnnl.h>

#include "kiln/backends/cpu/cpu_isa.h"

namespace kiln::cpu {

bool cpu_has_bf16_products() {
  cap_onednn_isa();
  // Each level's bits include those of the levels below it (dnnl_types.h).
  const auto isa = static_cast<unsigned>(dnnl_get_effective_cpu_isa());
  const auto bf16 = static_cast<unsigned>(dnnl_cpu_isa_avx512_core_bf16);
  return (isa & bf16) == bf16;
}

void print_no_bf16_units_notice_once() {
  static std::once_flag printed;
  std::call_once(printed, [] {
    std::cerr << "kiln: this CPU has no bf16 units (" << onednn_cpu_isa()
              << "); --bf16 rounds to bf16 and multiplies in fp32" << std::endl;
  });
}

}  // namespace kiln::cpu
