// What identifies a compiled program in the runtime's cache, and the explanation of a compile:
// which input's shape or dtype (or which option) differs from an earlier program of its family.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/backends/backend.h"

namespace kiln {

// An input of the graph as run() binds it: by position; the name is for explanations only.
struct InputSignature {
  std::string name;
  InputRole role = InputRole::data;
  DType dtype = DType::f32;
  Shape shape;

  std::string text() const;  // "i64(8,16)"
};

// Two programs with equal keys are interchangeable: the same computation (graph fingerprint),
// the same arguments (dtype and shape of every input, in order), the same backend, compiler
// switches, donations and number of replicas.
struct ProgramKey {
  uint64_t fingerprint = 0;
  std::vector<InputSignature> inputs;
  std::string backend;
  std::string options;  // CompileOptions::key()
  std::vector<Donation> donations;
  int replicas = 1;

  bool operator==(const ProgramKey& other) const;
  // Everything operator== compares, as stable text (equal keys, equal texts; input names left
  // out): what the compile cache on disk is keyed by. "fingerprint=00c0ffee00c0ffee
  // inputs=f32(2,3),f32(3) backend=cpu options=dce,cse donations=1>0"
  std::string text() const;
};

ProgramKey program_key(const Graph& graph, const std::vector<Value>& outputs,
                       const CompileSpec& spec, std::string_view backend);

// How many things set `next` apart from `earlier` (inputs changed, added or removed, the backend,
// the options, the donations, the replicas, and a changed computation when nothing else explains it): 0 only for
// equal keys.
int64_t key_distance(const ProgramKey& earlier, const ProgramKey& next);

// What changed from `earlier` to `next`, e.g. "input_ids, attention_mask changed from i64(8,16)
// to i64(8,32)"; inputs with the same change are named together.
std::string key_difference(const ProgramKey& earlier, const ProgramKey& next);

}  // namespace kiln
