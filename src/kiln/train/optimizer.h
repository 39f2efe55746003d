// The optimizer contract: an update rule expressed as graph ops over a parameter, its gradient
// and the optimizer's own named per-parameter slots, so that every optimizer compiles into the
// same step program. The rules are those transformers' Trainer builds for --optim.
#pragma once

#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/ir/ops.h"

namespace kiln {

// What --optim, --optim_args and the Adam/weight-decay flags ask for (learning rate aside: it
// is an input of the step so that a schedule changes it without recompiling).
struct OptimizerConfig {
  std::string name = "adamw_torch";  // one of optimizer_names()
  double weight_decay = 0.0;         // on the parameters that decay (not biases, LayerNorm)
  double adam_beta1 = 0.9;
  double adam_beta2 = 0.999;
  double adam_epsilon = 1e-8;
  // --optim_args, "key=value,..." parsed as HF's _parse_optim_args.
  std::map<std::string, std::string> args = {};
};

// A per-parameter state tensor: its name (part of the graph input and checkpoint tensor name,
// "<parameter>.<name>") and shape. Slots start at zero.
struct OptimizerSlot {
  std::string name;
  Shape shape;
};

struct OptimizerUpdate {
  Value param;
  std::vector<Value> slots;  // in the order of Optimizer::slots()
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  // The slots a parameter of `shape` keeps (possibly none).
  virtual std::vector<OptimizerSlot> slots(const Shape& shape) const = 0;
  // One update of `param` by `grad`. `learning_rate` and `step` (1-based: this update's count)
  // are rank-0 values of the parameter's dtype; `slots` follow slots(param.shape()); `decay`
  // false means no weight decay for this parameter.
  virtual OptimizerUpdate update(Value param, Value grad, const std::vector<Value>& slots,
                                 Value learning_rate, Value step, bool decay) const = 0;
};

// The --optim values Kiln builds, for --help and validation.
std::span<const std::string_view> optimizer_names();
// The name a checkpoint records: the same for names that are the same math (adamw_torch and
// adamw_torch_fused are "adamw", the name older checkpoints carry).
std::string optimizer_kind(const std::string& name);
// HF's _parse_optim_args: "a=1, b=2" -> {a: "1", b: "2"}; an entry without '=' is an Error
// naming --optim_args.
std::map<std::string, std::string> parse_optim_args(const std::string& text);
// The optimizer `config` names; an unknown name, an --optim_args key it does not take or a value
// that is not a number are Errors naming the flag.
std::unique_ptr<Optimizer> make_optimizer(const OptimizerConfig& config);

}  // namespace kiln
