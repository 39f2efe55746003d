// The update rules behind make_optimizer, one file each (adamw.cpp, adafactor.cpp, sgd.cpp,
// adagrad.cpp, rmsprop.cpp), and the --optim_args reading they share.
#pragma once

#include <initializer_list>
#include <map>
#include <memory>
#include <string>

#include "kiln/train/optimizer.h"

namespace kiln {

// --optim_args for one optimizer: the keys it takes, read as numbers or booleans.
class OptimArgs {
 public:
  // Errors name --optim_args and `optimizer` when `args` has a key not in `known`.
  OptimArgs(const std::map<std::string, std::string>& args, const std::string& optimizer,
            std::initializer_list<const char*> known);
  double number(const std::string& key, double fallback) const;
  // HF's reading: "true", "1", "yes" (any case) are true, anything else false.
  bool flag(const std::string& key, bool fallback) const;

 private:
  const std::map<std::string, std::string>& args_;
};

std::unique_ptr<Optimizer> make_adamw(const OptimizerConfig& config);
std::unique_ptr<Optimizer> make_adafactor(const OptimizerConfig& config);
std::unique_ptr<Optimizer> make_sgd(const OptimizerConfig& config);
std::unique_ptr<Optimizer> make_adagrad(const OptimizerConfig& config);
std::unique_ptr<Optimizer> make_rmsprop(const OptimizerConfig& config);

}  // namespace kiln
