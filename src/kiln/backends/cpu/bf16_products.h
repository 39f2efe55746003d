// Internal: whether this CPU multiplies bf16 operands in hardware (AVX512-BF16 or AMX, as capped
// by KILN_MAX_CPU_ISA and ONEDNN_MAX_CPU_ISA), which decides how the CPU backend runs --bf16 (BackendCapabilities::
// bf16_products), and the one line that says so when it does not.
#pragma once

namespace kiln::cpu {

bool cpu_has_bf16_products();

// Prints "kiln: this CPU has no bf16 units (avx2); --bf16 rounds to bf16 and multiplies in fp32"
// (with oneDNN's ISA name) to stderr, the first time it is called in the process.
void print_no_bf16_units_notice_once();

}  // namespace kiln::cpu
