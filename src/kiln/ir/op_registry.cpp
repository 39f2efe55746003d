// The op registry, generated from the op list in op_list.h.
#include <array>

#include "kiln/ir/error.h"
#include "kiln/ir/op_registry.h"
#include "kiln/ir/op_rules.h"

namespace kiln {
namespace {

#define KILN_RULE_vjp(name) &rules::vjp_##name
#define KILN_RULE_novjp(name) nullptr
#define KILN_DECOMPOSE_source(name) nullptr
#define KILN_DECOMPOSE_unary(name) nullptr
#define KILN_DECOMPOSE_binary(name) nullptr
#define KILN_DECOMPOSE_structural(name) nullptr
#define KILN_DECOMPOSE_composite(name) &rules::decompose_##name
#define KILN_DECOMPOSE_collective(name) nullptr
#define KILN_OP_INFO(name, category, gradient)                                  \
  OpInfo{OpKind::name, #name, OpCategory::category, KILN_RULE_##gradient(name), \
         KILN_DECOMPOSE_##category(name)},

const std::array<OpInfo, kNumOps> kOpInfos = {KILN_OPS(KILN_OP_INFO)};

}  // namespace

const OpInfo& op_info(OpKind kind) { return kOpInfos.at(static_cast<size_t>(kind)); }

std::string_view op_name(OpKind kind) { return op_info(kind).name; }

OpKind op_from_name(std::string_view name) {
  for (const OpInfo& info : kOpInfos) {
    if (info.name == name) return info.kind;
  }
  fail("op", "unknown op '", name, "'");
}

std::string_view compare_dir_name(CompareDir dir) {
  switch (dir) {
    case CompareDir::eq: return "eq";
    case CompareDir::ne: return "ne";
    case CompareDir::lt: return "lt";
    case CompareDir::le: return "le";
    case CompareDir::gt: return "gt";
    case CompareDir::ge: return "ge";
  }
  fail("compare", "bad direction ", static_cast<int>(dir));
}

}  // namespace kiln
