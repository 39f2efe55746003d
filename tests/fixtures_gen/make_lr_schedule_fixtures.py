#!/usr/bin/env python3
"""Writes tests/fixtures/lr_schedule/transformers_schedules.json: the learning rate at every step
of transformers.get_scheduler's schedulers, for lr_schedule_fixture_test.

Each case builds get_scheduler(name, SGD(lr=base_lr) over a dummy parameter, num_warmup_steps,
num_training_steps, scheduler_specific_kwargs=kwargs) and records the optimizer's lr before each
scheduler step, as the Trainer uses it for that update (steps 0 .. num_training_steps + 5, so the
end of each schedule is covered too). reduce_lr_on_plateau is stepped with a fixed metric sequence
instead, as Trainer._evaluate steps it after each evaluation; its case records the lr after each
metric and the scheduler's state at the end.

Run from the repository root (torch, transformers):
  PYTHONPATH=/work/main/build/pjrt-plugin python3 tests/fixtures_gen/make_lr_schedule_fixtures.py
"""
import json
import math
import os

import torch
import transformers
from transformers import get_scheduler

OUT = "tests/fixtures/lr_schedule/transformers_schedules.json"

# (name, base_lr, num_warmup_steps, num_training_steps, kwargs)
LAMBDA_CASES = [
    ("linear", 1e-3, 0, 20, {}),
    ("linear", 3e-4, 5, 23, {}),
    ("cosine", 1e-3, 0, 20, {}),
    ("cosine", 2e-5, 4, 31, {"num_cycles": 1.5}),
    ("constant", 5e-5, 0, 10, {}),
    ("constant_with_warmup", 5e-5, 6, 15, {}),
    ("cosine_with_restarts", 1e-3, 0, 30, {}),
    ("cosine_with_restarts", 1e-3, 3, 40, {"num_cycles": 3}),
    ("polynomial", 1e-3, 0, 25, {}),
    ("polynomial", 7e-4, 4, 25, {"lr_end": 1e-5, "power": 2.0}),
    ("polynomial", 7e-4, 2, 19, {"power": 0.5}),
    ("inverse_sqrt", 1e-3, 0, 30, {}),
    ("inverse_sqrt", 1e-3, 8, 40, {}),
    ("inverse_sqrt", 1e-3, 8, 40, {"timescale": 3}),
    ("cosine_with_min_lr", 1e-3, 0, 30, {"min_lr_rate": 0.1}),
    ("cosine_with_min_lr", 1e-3, 5, 30, {"min_lr": 2e-4, "num_cycles": 0.75}),
    ("warmup_stable_decay", 1e-3, 0, 30, {"num_decay_steps": 10}),
    ("warmup_stable_decay", 1e-3, 6, 40,
     {"num_decay_steps": 12, "num_stable_steps": 15, "warmup_type": "cosine",
      "decay_type": "1-sqrt", "min_lr_ratio": 0.05}),
    ("warmup_stable_decay", 1e-3, 5, 30,
     {"num_decay_steps": 9, "warmup_type": "1-sqrt", "decay_type": "linear", "min_lr_ratio": 0.2}),
    ("warmup_stable_decay", 1e-3, 4, 30,
     {"num_decay_steps": 16, "decay_type": "cosine", "num_cycles": 1.0}),
]

# A validation loss that improves, stalls (including a change smaller than the threshold), and
# improves again; and an accuracy-like metric for mode "max".
LOSSES = [1.0, 0.8, 0.79995, 0.81, 0.8, 0.85, 0.7, 0.7, 0.71, 0.72, 0.73, 0.69, 0.9, 0.9, 0.9,
          0.9, 0.9, 0.9, 0.5, 0.6]
ACCURACIES = [0.5, 0.6, 0.6, 0.61, 0.605, 0.59, 0.62, 0.62, 0.62, 0.7, 0.69, 0.68, 0.67, 0.66]

PLATEAU_CASES = [
    (1e-3, {}, LOSSES),
    (1e-3, {"patience": 1}, LOSSES),
    (1e-3, {"patience": 2, "factor": 0.5, "cooldown": 2, "min_lr": 2e-4}, LOSSES),
    (1e-3, {"patience": 0, "threshold": 0.05, "threshold_mode": "abs", "eps": 1e-4}, LOSSES),
    (1e-3, {"mode": "max", "patience": 1, "factor": 0.3}, ACCURACIES),
    (1e-3, {"mode": "max", "patience": 0, "threshold_mode": "abs", "threshold": 0.005}, ACCURACIES),
]


def optimizer(lr):
    return torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=lr)


def lambda_case(name, base_lr, warmup, total, kwargs):
    opt = optimizer(base_lr)
    sched = get_scheduler(name, opt, num_warmup_steps=warmup, num_training_steps=total,
                          scheduler_specific_kwargs=dict(kwargs))
    lrs = []
    for _ in range(total + 6):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    return {"lr_scheduler_type": name, "base_lr": base_lr, "num_warmup_steps": warmup,
            "num_training_steps": total, "lr_scheduler_kwargs": kwargs, "lrs": lrs}


def plateau_case(base_lr, kwargs, metrics):
    opt = optimizer(base_lr)
    sched = get_scheduler("reduce_lr_on_plateau", opt, scheduler_specific_kwargs=dict(kwargs))
    lrs = []
    for metric in metrics:
        sched.step(metric)
        lrs.append(opt.param_groups[0]["lr"])
    best = sched.best if math.isfinite(sched.best) else None
    return {"lr_scheduler_type": "reduce_lr_on_plateau", "base_lr": base_lr,
            "lr_scheduler_kwargs": kwargs, "metrics": metrics, "lrs": lrs,
            "final_state": {"best": best, "num_bad_epochs": sched.num_bad_epochs,
                            "cooldown_counter": sched.cooldown_counter,
                            "last_epoch": sched.last_epoch}}


def main():
    cases = [lambda_case(*case) for case in LAMBDA_CASES]
    cases += [plateau_case(*case) for case in PLATEAU_CASES]
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump({"transformers": transformers.__version__, "torch": torch.__version__,
                   "cases": cases}, f, indent=1)
        f.write("\n")
    print(f"wrote {OUT}: {len(cases)} cases")


if __name__ == "__main__":
    main()
