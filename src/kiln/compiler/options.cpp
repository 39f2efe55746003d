// Pass switches by name.
#include "kiln/compiler/options.h"

#include <array>
#include <utility>

#include "kiln/ir/error.h"

namespace kiln {
namespace {

using Switch = bool CompileOptions::*;

constexpr std::array<std::pair<std::string_view, Switch>, 6> kPasses{{
    {"dce", &CompileOptions::dead_code},
    {"cse", &CompileOptions::common_subexpressions},
    {"fold", &CompileOptions::constant_folding},
    {"simplify", &CompileOptions::simplification},
    {"fusion", &CompileOptions::fusion},
    {"inplace", &CompileOptions::in_place},
}};

}  // namespace

void CompileOptions::disable(std::string_view names, std::string_view where) {
  while (!names.empty()) {
    size_t comma = names.find(',');
    std::string_view name = names.substr(0, comma);
    names = comma == std::string_view::npos ? std::string_view{} : names.substr(comma + 1);
    if (name.empty()) continue;
    bool known = false;
    for (const auto& [pass, enabled] : kPasses) {
      if (pass == name) {
        this->*enabled = false;
        known = true;
      }
    }
    check(known, where, "unknown pass '", name, "' (known: dce, cse, fold, simplify, fusion, ",
          "inplace)");
  }
}

CompileOptions CompileOptions::semantics_only() const {
  CompileOptions options;
  for (const auto& [pass, enabled] : kPasses) options.*enabled = false;
  options.decompose_composites = decompose_composites;
  options.bf16 = bf16;
  // Not an optimisation to turn off: the memory policy asked for, which the oracle checks.
  options.gradient_checkpointing = gradient_checkpointing;
  return options;
}

std::string CompileOptions::key() const {
  std::string key;
  for (const auto& [pass, enabled] : kPasses) {
    if (!(this->*enabled)) continue;
    if (!key.empty()) key += ',';
    key += pass;
  }
  if (decompose_composites) key += key.empty() ? "decompose" : ",decompose";
  if (bf16) key += key.empty() ? "bf16" : ",bf16";
  if (gradient_checkpointing) key += key.empty() ? "checkpoint" : ",checkpoint";
  return key.empty() ? "none" : key;
}

}  // namespace kiln
