"""Label smoothing fixtures for label_smoothing_test: transformers' LabelSmoother (what the
Trainer applies with --label_smoothing_factor) on fixed logits and class labels, some ignored
(-100), with the loss and its gradient with respect to the logits from torch's autograd. Writes
tests/data/label_smoothing/cases.json.
Run: PYTHONPATH=build/test-python /usr/bin/python3 tests/fixtures_gen/make_label_smoothing_fixtures.py
(scripts/setup.sh installs transformers there for Debian's python3-torch).
"""
import json
import os

import torch
import transformers
from transformers.trainer_pt_utils import LabelSmoother


def case(name, logits, labels, epsilon):
    logits = torch.tensor(logits, dtype=torch.float64, requires_grad=True)
    labels = torch.tensor(labels)
    loss = LabelSmoother(epsilon=epsilon)({"logits": logits}, labels)
    loss.backward()
    return {"name": name, "epsilon": epsilon, "classes": logits.shape[1],
            "logits": logits.detach().ravel().tolist(), "labels": labels.tolist(),
            "loss": loss.item(), "grad": logits.grad.ravel().tolist()}


def main():
    generator = torch.Generator().manual_seed(3)
    logits = (torch.randn(6, 5, generator=generator) * 3).tolist()
    cases = [
        case("classification", logits, [0, 4, 2, 2, 1, 3], 0.1),
        case("ignored_labels", logits, [0, -100, 2, -100, 1, 3], 0.2),
        case("no_smoothing", logits, [1, 1, 0, 4, -100, 3], 0.0),
        case("heavy", logits[:3], [4, 0, 1], 0.9),
    ]
    out = os.path.join(os.path.dirname(__file__), "..", "data", "label_smoothing", "cases.json")
    with open(out, "w") as f:
        json.dump({"transformers": transformers.__version__, "cases": cases}, f, indent=1)
        f.write("\n")
    for c in cases:
        print(c["name"], c["loss"])


if __name__ == "__main__":
    main()
