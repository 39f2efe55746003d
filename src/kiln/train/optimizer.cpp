// make_optimizer: --optim names to update rules, and --optim_args parsing.
#include "kiln/train/optimizer.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <sstream>

#include "kiln/ir/error.h"
#include "kiln/train/optimizer_rules.h"

namespace kiln {
namespace {

using Factory = std::unique_ptr<Optimizer> (*)(const OptimizerConfig&);

constexpr std::array<std::string_view, 6> kNames = {
    "adamw_torch", "adamw_torch_fused", "adafactor", "sgd", "adagrad", "rmsprop"};
// kNames' builders, in its order: adamw_torch_fused is the same math as adamw_torch.
constexpr std::array<Factory, kNames.size()> kFactories = {make_adamw,   make_adamw,  make_adafactor,
                                                           make_sgd,     make_adagrad, make_rmsprop};

}  // namespace

std::span<const std::string_view> optimizer_names() { return kNames; }

std::string optimizer_kind(const std::string& name) {
  return name.starts_with("adamw_torch") ? "adamw" : name;
}

std::map<std::string, std::string> parse_optim_args(const std::string& text) {
  std::string compact = text;
  std::erase(compact, ' ');
  std::map<std::string, std::string> out;
  if (compact.empty()) return out;
  std::stringstream entries(compact);
  for (std::string entry; std::getline(entries, entry, ',');) {
    size_t equals = entry.find('=');
    check(equals != std::string::npos && entry.find('=', equals + 1) == std::string::npos,
          "--optim_args", "'", entry, "' is not key=value");
    out[entry.substr(0, equals)] = entry.substr(equals + 1);
  }
  return out;
}

std::unique_ptr<Optimizer> make_optimizer(const OptimizerConfig& config) {
  for (size_t i = 0; i < kNames.size(); ++i) {
    if (kNames[i] == config.name) return kFactories[i](config);
  }
  std::string choices;
  for (std::string_view name : kNames) choices += (choices.empty() ? "" : ", ") + std::string(name);
  fail("--optim", "'", config.name, "' is not one of ", choices);
}

OptimArgs::OptimArgs(const std::map<std::string, std::string>& args, const std::string& optimizer,
                     std::initializer_list<const char*> known)
    : args_(args) {
  for (const auto& [key, value] : args) {
    if (std::any_of(known.begin(), known.end(), [&](const char* k) { return key == k; })) continue;
    std::string takes;
    for (const char* k : known) takes += (takes.empty() ? "" : ", ") + std::string(k);
    fail("--optim_args", "'", key, "' is not a hyper-parameter of --optim ", optimizer,
         takes.empty() ? std::string(", which takes none") : " (it takes " + takes + ")",
         key == "weight_decay" ? "; weight decay is --weight_decay" : "");
  }
}

double OptimArgs::number(const std::string& key, double fallback) const {
  auto found = args_.find(key);
  if (found == args_.end()) return fallback;
  const std::string& text = found->second;
  double value = 0.0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  check(error == std::errc() && end == text.data() + text.size(), "--optim_args", key, "=", text,
        ": not a number");
  return value;
}

bool OptimArgs::flag(const std::string& key, bool fallback) const {
  auto found = args_.find(key);
  if (found == args_.end()) return fallback;
  std::string lower = found->second;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower == "true" || lower == "1" || lower == "yes";
}

}  // namespace kiln
