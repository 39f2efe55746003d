// Program keys, and the distance and difference between two of them that explain a recompile.
#include "kiln/runtime/program_key.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <utility>

namespace kiln {
namespace {

bool same_donations(const std::vector<Donation>& a, const std::vector<Donation>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].input != b[i].input || a[i].output != b[i].output) return false;
  }
  return true;
}

bool same_signature(const InputSignature& a, const InputSignature& b) {
  return a.dtype == b.dtype && a.shape == b.shape;
}

// Inputs by name (the first of a repeated name), for comparing programs built separately.
std::map<std::string, const InputSignature*> by_name(const ProgramKey& key) {
  std::map<std::string, const InputSignature*> named;
  for (const InputSignature& input : key.inputs) named.emplace(input.name, &input);
  return named;
}

// The input-level differences: changed inputs grouped by (from, to), then added and removed ones.
struct InputChanges {
  std::vector<std::pair<std::pair<std::string, std::string>, std::vector<std::string>>> changed;
  std::vector<const InputSignature*> added, removed;

  int64_t count() const {
    int64_t total = static_cast<int64_t>(added.size() + removed.size());
    for (const auto& [change, names] : changed) total += static_cast<int64_t>(names.size());
    return total;
  }
};

InputChanges input_changes(const ProgramKey& earlier, const ProgramKey& next) {
  InputChanges changes;
  auto before = by_name(earlier), after = by_name(next);
  for (const InputSignature& input : next.inputs) {
    if (after.at(input.name) != &input) continue;
    auto found = before.find(input.name);
    if (found == before.end()) {
      changes.added.push_back(&input);
      continue;
    }
    if (same_signature(*found->second, input)) continue;
    std::pair<std::string, std::string> change{found->second->text(), input.text()};
    auto group = std::find_if(changes.changed.begin(), changes.changed.end(),
                              [&](const auto& entry) { return entry.first == change; });
    if (group == changes.changed.end()) {
      changes.changed.push_back({change, {input.name}});
    } else {
      group->second.push_back(input.name);
    }
  }
  for (const InputSignature& input : earlier.inputs) {
    if (before.at(input.name) == &input && !after.contains(input.name)) {
      changes.removed.push_back(&input);
    }
  }
  return changes;
}

}  // namespace

std::string InputSignature::text() const {
  return std::string(dtype_name(dtype)) + shape_str(shape);
}

bool ProgramKey::operator==(const ProgramKey& other) const {
  if (fingerprint != other.fingerprint || backend != other.backend || options != other.options ||
      inputs.size() != other.inputs.size() || !same_donations(donations, other.donations) ||
      replicas != other.replicas) {
    return false;
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!same_signature(inputs[i], other.inputs[i])) return false;
  }
  return true;
}

std::string ProgramKey::text() const {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(fingerprint));
  std::string text = std::string("fingerprint=") + hex + " inputs=";
  for (size_t i = 0; i < inputs.size(); ++i) text += (i > 0 ? "," : "") + inputs[i].text();
  text += " backend=" + backend + " options=" + options + " donations=";
  for (size_t i = 0; i < donations.size(); ++i) {
    text += (i > 0 ? "," : "") + std::to_string(donations[i].input) + ">" +
            std::to_string(donations[i].output);
  }
  return text + " replicas=" + std::to_string(replicas);
}

ProgramKey program_key(const Graph& graph, const std::vector<Value>& outputs,
                       const CompileSpec& spec, std::string_view backend) {
  ProgramKey key;
  key.fingerprint = graph_fingerprint(graph, outputs);
  for (int32_t id : graph.inputs()) {
    const Node& node = graph.node(id);
    key.inputs.push_back(
        {graph.input_name(id), std::get<InputAttrs>(node.attrs).role, node.dtype, node.shape});
  }
  key.backend = backend;
  key.options = spec.options.key();
  key.donations = spec.donations;
  key.replicas = spec.replicas;
  return key;
}

int64_t key_distance(const ProgramKey& earlier, const ProgramKey& next) {
  int64_t distance = input_changes(earlier, next).count() + (earlier.backend != next.backend) +
                     (earlier.options != next.options) +
                     !same_donations(earlier.donations, next.donations) +
                     (earlier.replicas != next.replicas);
  if (distance == 0 && !(earlier == next)) distance = 1;  // the computation itself changed
  return distance;
}

std::string key_difference(const ProgramKey& earlier, const ProgramKey& next) {
  std::vector<std::string> parts;
  InputChanges changes = input_changes(earlier, next);
  for (const auto& [change, names] : changes.changed) {
    std::string part;
    for (const std::string& name : names) part += (part.empty() ? "" : ", ") + name;
    parts.push_back(part + " changed from " + change.first + " to " + change.second);
  }
  for (const InputSignature* input : changes.added) {
    parts.push_back("new input " + input->name + " " + input->text());
  }
  for (const InputSignature* input : changes.removed) {
    parts.push_back("no input " + input->name + " (was " + input->text() + ")");
  }
  if (earlier.backend != next.backend) {
    parts.push_back("backend changed from " + earlier.backend + " to " + next.backend);
  }
  if (earlier.options != next.options) {
    parts.push_back("compile options changed from " + earlier.options + " to " + next.options);
  }
  if (!same_donations(earlier.donations, next.donations)) parts.push_back("donations changed");
  if (earlier.replicas != next.replicas) {
    parts.push_back("replicas changed from " + std::to_string(earlier.replicas) + " to " +
                    std::to_string(next.replicas));
  }
  if (parts.empty() && earlier.fingerprint != next.fingerprint) {
    parts.push_back("the graph changed (same inputs, a different computation)");
  }
  std::string text;
  for (const std::string& part : parts) text += (text.empty() ? "" : "; ") + part;
  return text;
}

}  // namespace kiln
