"""Multi-label metric fixtures for multi_label_metrics_test: what run_classification.py reports
for a multi-label task (evaluate's "f1" metric with config "multilabel", i.e. sklearn's f1_score
on multi-hot arrays, average="micro") plus sklearn's macro F1 and accuracy_score (subset
accuracy), computed here from their definitions with numpy on hand-made and random cases
(a label never true nor predicted, every row right, nothing predicted). Predictions are the
logits above 0, as run_classification.py thresholds them. Writes
tests/data/multi_label/metrics.json. Run: python3 tests/fixtures_gen/make_multi_label_metrics_fixtures.py (Debian's python3-numpy)
"""
import json
import os

import numpy as np


def f1(tp, fp, fn):
    # sklearn's F1 with zero_division=0: 2tp / (2tp + fp + fn), 0 when that is 0/0.
    d = 2 * tp + fp + fn
    return 0.0 if d == 0 else float(2 * tp / d)


def metrics(logits, truth):
    pred = (logits > 0).astype(int)
    tp = ((pred == 1) & (truth == 1)).sum(axis=0)
    fp = ((pred == 1) & (truth == 0)).sum(axis=0)
    fn = ((pred == 0) & (truth == 1)).sum(axis=0)
    return {
        "accuracy": float(np.mean(np.all(pred == truth, axis=1))),
        "f1": f1(tp.sum(), fp.sum(), fn.sum()),
        "f1_macro": float(np.mean([f1(a, b, c) for a, b, c in zip(tp, fp, fn)])),
    }


def case(name, logits, truth):
    logits, truth = np.asarray(logits, dtype=float), np.asarray(truth, dtype=int)
    return {"name": name, "num_labels": int(truth.shape[1]), "logits": logits.ravel().tolist(),
            "label_sets": [np.flatnonzero(row).tolist() for row in truth],
            "expected": metrics(logits, truth)}


def main():
    rng = np.random.default_rng(7)
    cases = [
        # Label 2 is never true nor predicted: its F1 is 0 (zero_division) and counts in macro.
        case("unused_label", [[2.0, -1.0, -3.0], [0.5, 0.25, -0.5], [-1.0, 1.5, -2.0]],
             [[1, 0, 0], [1, 1, 0], [0, 0, 0]]),
        case("all_right", [[1.0, -1.0], [-1.0, 1.0]], [[1, 0], [0, 1]]),
        case("nothing_predicted", [[-1.0, -2.0], [-0.5, -0.1]], [[1, 0], [1, 1]]),
        # A logit of exactly 0 is not a prediction (sigmoid 0.5 is not above 0.5).
        case("zero_logit", [[0.0, 1.0]], [[1, 1]]),
    ]
    for rows, labels in [(50, 4), (200, 7)]:
        truth = (rng.random((rows, labels)) < 0.3).astype(int)
        logits = rng.normal(size=(rows, labels)) + 1.5 * (2 * truth - 1) * rng.random((rows, 1))
        cases.append(case(f"random_{rows}x{labels}", logits, truth))
    out = os.path.join(os.path.dirname(__file__), "..", "data", "multi_label", "metrics.json")
    with open(out, "w") as f:
        json.dump(cases, f, indent=1)
        f.write("\n")
    for c in cases:
        print(c["name"], c["expected"])


if __name__ == "__main__":
    main()
