// Lowering of a compiled Kiln program to StableHLO: one module whose public @main takes the
// graph's inputs in order and returns its outputs, with each honoured donation written as
// `tf.aliasing_output` on the donated argument (XLA turns it into input/output aliasing).
// Composites must have been decomposed (PJRT backends run none of them as kernels). The module is
// one replica's program of `replicas` (mhlo.num_replicas); collectives combine all of them.
#pragma once

#include <string>
#include <vector>

#include "kiln/backends/pjrt/stablehlo_writer.h"
#include "kiln/compiler/program.h"

namespace kiln::pjrt {

std::string lower_to_stablehlo(const Program& program, int replicas = 1);

// The value of one non-input node, written from its operands' values, in a program of `replicas`
// replicas. Throws Error naming the op for composites.
Ssa lower_node(StableHloWriter& writer, const Node& node, const std::vector<Ssa>& operands,
               int replicas);

// random_bits as integer ops: Philox-4x32-10 with key (seed lo, seed hi) and counter
// (element / 4, stream, offset lo, offset hi), element i taking word i % 4; with a vector offset,
// leading row r keyed by offset[r] and i counted within the row (kiln/ir/philox.h).
Ssa lower_random_bits(StableHloWriter& writer, const Ssa& seed, const Ssa& offset, uint32_t stream,
                      const Shape& shape);

}  // namespace kiln::pjrt
