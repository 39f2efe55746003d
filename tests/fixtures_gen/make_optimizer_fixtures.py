#!/usr/bin/env python3
"""Parameter trajectories of every --optim Kiln builds, as transformers' Trainer builds it
(Trainer.get_optimizer_cls_and_kwargs on the TrainingArguments fields optim, optim_args,
weight_decay and adam_*), for optimizer_trajectory_test.

Each case updates a 2-D parameter "w" (in the weight-decay group) and a 1-D parameter "b" (in the
no-decay group, as the Trainer groups biases) for STEPS steps with fixed random gradients and a
learning rate that changes every step (as a scheduler sets it). The cases use non-default
hyper-parameters too (momentum, dampening, nesterov, centered, lr_decay, eps, betas).
Adafactor's "w" is 2-D, so its second moment is factored; "b" is not.

Writes tests/data/optimizers/trajectories.safetensors: per case "<case>.<param>.init",
"<case>.<param>.grad.<k>" and "<case>.<param>.after.<k>" (k = 0..STEPS-1), float32; the
metadata "cases" is a JSON list of {name, optim, optim_args, weight_decay, adam_beta1,
adam_beta2, adam_epsilon, lrs}.

Usage: python3 tests/fixtures_gen/make_optimizer_fixtures.py (pip: torch transformers safetensors)
"""
import json
import os
from types import SimpleNamespace

import torch
from safetensors.torch import save_file
from transformers import Trainer
from transformers.training_args import OptimizerNames

OUT = os.path.join(os.path.dirname(__file__), "..", "data", "optimizers")
STEPS = 5
LRS = [0.1, 0.07, 0.05, 0.03, 0.02]
CASES = [
    dict(name="adamw", optim="adamw_torch", optim_args="", weight_decay=0.1,
         adam_beta1=0.8, adam_beta2=0.99, adam_epsilon=1e-6),
    dict(name="adamw_fused", optim="adamw_torch_fused", optim_args="", weight_decay=0.0),
    dict(name="sgd", optim="sgd", optim_args="", weight_decay=0.1),
    dict(name="sgd_momentum", optim="sgd", optim_args="momentum=0.9,dampening=0.25",
         weight_decay=0.05),
    dict(name="sgd_nesterov", optim="sgd", optim_args="momentum=0.8, nesterov=True",
         weight_decay=0.0),
    dict(name="adagrad", optim="adagrad", optim_args="lr_decay=0.1,eps=1e-6", weight_decay=0.1),
    dict(name="rmsprop", optim="rmsprop", optim_args="", weight_decay=0.0),
    dict(name="rmsprop_centered", optim="rmsprop",
         optim_args="momentum=0.5,alpha=0.9,eps=1e-6,centered=true", weight_decay=0.1),
    dict(name="adafactor", optim="adafactor", optim_args="", weight_decay=0.1),
]


def run(case, generator):
    # The fields get_optimizer_cls_and_kwargs reads (a TrainingArguments needs accelerate).
    args = SimpleNamespace(
        learning_rate=LRS[0], optim=OptimizerNames(case["optim"]),
        optim_args=case["optim_args"] or None, weight_decay=case["weight_decay"],
        adam_beta1=case.get("adam_beta1", 0.9), adam_beta2=case.get("adam_beta2", 0.999),
        adam_epsilon=case.get("adam_epsilon", 1e-8))
    optimizer_cls, kwargs = Trainer.get_optimizer_cls_and_kwargs(args)
    kwargs.pop("fused", None)  # the same math on the CPU
    w = torch.nn.Parameter(torch.randn(3, 4, generator=generator))
    b = torch.nn.Parameter(torch.randn(4, generator=generator))
    groups = [{"params": [w], "weight_decay": args.weight_decay},
              {"params": [b], "weight_decay": 0.0}]
    optimizer = optimizer_cls(groups, **kwargs)
    out = {}
    prefix = case["name"]
    for name, p in (("w", w), ("b", b)):
        out[f"{prefix}.{name}.init"] = p.detach().clone()
    for k in range(STEPS):
        for group in optimizer.param_groups:
            group["lr"] = LRS[k]
        for name, p in (("w", w), ("b", b)):
            p.grad = torch.randn(p.shape, generator=generator)
            out[f"{prefix}.{name}.grad.{k}"] = p.grad.clone()
        optimizer.step()
        for name, p in (("w", w), ("b", b)):
            out[f"{prefix}.{name}.after.{k}"] = p.detach().clone()
    return out


def main():
    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(19)
    tensors = {}
    cases = []
    for case in CASES:
        tensors.update(run(case, generator))
        cases.append(dict(adam_beta1=0.9, adam_beta2=0.999, adam_epsilon=1e-8, lrs=LRS) | case)
    os.makedirs(OUT, exist_ok=True)
    save_file({k: v.contiguous() for k, v in tensors.items()},
              os.path.join(OUT, "trajectories.safetensors"), metadata={"cases": json.dumps(cases)})


if __name__ == "__main__":
    main()
