// bf16 units, as oneDNN sees them: its effective ISA honours ONEDNN_MAX_CPU_ISA, so a capped run
// on a bigger CPU takes the path of a smaller one.
#include "kiln/backends/cpu/bf16_products.h"

#include <iostream>
#include <mutex>
#include <string>
#include <oneapi/dnnl/dnnl.hpp>

namespace kiln::cpu {
namespace {

using Isa = dnnl::cpu_isa;

// Each level's bits include those of the levels below it (dnnl_types.h).
bool includes(Isa isa, Isa level) {
  auto bits = static_cast<unsigned>(level);
  return (static_cast<unsigned>(isa) & bits) == bits;
}

std::string isa_name(Isa isa) {
  for (auto [level, name] : {std::pair{Isa::avx512_core_amx, "amx"},
                             std::pair{Isa::avx512_core_bf16, "avx512_core_bf16"},
                             std::pair{Isa::avx512_core, "avx512_core"},
                             std::pair{Isa::avx2, "avx2"}, std::pair{Isa::avx, "avx"}}) {
    if (includes(isa, level)) return name;
  }
  return "sse41";
}

}  // namespace

bool cpu_has_bf16_products() {
  return includes(dnnl::get_effective_cpu_isa(), Isa::avx512_core_bf16);
}

void print_no_bf16_units_notice_once() {
  static std::once_flag printed;
  std::call_once(printed, [] {
    std::cerr << "kiln: this CPU has no bf16 units (" << isa_name(dnnl::get_effective_cpu_isa())
              << "); --bf16 rounds to bf16 and multiplies in fp32" << std::endl;
  });
}

}  // namespace kiln::cpu
