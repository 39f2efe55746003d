"""GLUE metric fixtures for glue_metrics_test: the metrics run_glue.py reports per --task_name
(evaluate's "glue" metric: sklearn's matthews_corrcoef and f1_score, scipy's pearsonr and
spearmanr), computed here from their definitions with numpy on hand-made and random cases
(ties, constant predictions, three classes). Where scipy is importable its pearsonr/spearmanr must
agree. Writes tests/data/glue/metrics.json. Run: python3 tests/fixtures_gen/make_glue_metrics_fixtures.py
"""
import json
import os

import numpy as np


def matthews(pred, label, classes):
    # sklearn.metrics.matthews_corrcoef: from the confusion matrix; 0 when a factor is 0.
    c = np.zeros((classes, classes))
    for p, t in zip(pred, label):
        c[t, p] += 1
    t_sum, p_sum = c.sum(axis=1), c.sum(axis=0)
    n, correct = c.sum(), np.trace(c)
    cov_ytyp = correct * n - t_sum @ p_sum
    cov_ypyp = n * n - p_sum @ p_sum
    cov_ytyt = n * n - t_sum @ t_sum
    if cov_ypyp * cov_ytyt == 0:
        return 0.0
    return float(cov_ytyp / np.sqrt(cov_ytyt * cov_ypyp))


def matthews_binary(pred, label):
    # The textbook two-class formula, a second derivation to check the first against.
    pred, label = np.asarray(pred), np.asarray(label)
    tp = np.sum((pred == 1) & (label == 1)); tn = np.sum((pred == 0) & (label == 0))
    fp = np.sum((pred == 1) & (label == 0)); fn = np.sum((pred == 0) & (label == 1))
    d = (tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)
    return 0.0 if d == 0 else float((tp * tn - fp * fn) / np.sqrt(d))


def f1_binary(pred, label):
    pred, label = np.asarray(pred), np.asarray(label)
    tp = np.sum((pred == 1) & (label == 1))
    d = 2 * tp + np.sum((pred == 1) & (label == 0)) + np.sum((pred == 0) & (label == 1))
    return 0.0 if d == 0 else float(2 * tp / d)


def pearson(x, y):
    x, y = np.asarray(x, float), np.asarray(y, float)
    dx, dy = x - x.mean(), y - y.mean()
    return float(dx @ dy / np.sqrt((dx @ dx) * (dy @ dy)))


def average_ranks(x):
    # Each value's rank: the values below it, plus the mean position among its equals (1-based).
    x = np.asarray(x, float)
    return np.array([np.sum(x < v) + (np.sum(x == v) + 1) / 2 for v in x])


def spearman(x, y):
    return pearson(average_ranks(x), average_ranks(y))


def class_case(name, task, pred, label, classes):
    out = {"name": name, "task": task, "predictions": list(map(int, pred)),
           "labels": list(map(int, label)), "num_labels": classes}
    if task == "cola":
        out["expected"] = {"matthews_correlation": matthews(pred, label, classes)}
        if classes == 2:
            assert abs(out["expected"]["matthews_correlation"] - matthews_binary(pred, label)) < 1e-12
        return out
    accuracy = float(np.mean(np.asarray(pred) == np.asarray(label)))
    if task in ("mrpc", "qqp"):
        f1 = f1_binary(pred, label)
        out["expected"] = {"accuracy": accuracy, "f1": f1, "combined_score": (accuracy + f1) / 2}
    else:
        out["expected"] = {"accuracy": accuracy}
    return out


def regression_case(name, pred, label):
    # Labels are float32 in Kiln's data; round them here so both sides see the same numbers.
    label = [float(np.float32(v)) for v in label]
    p, s = pearson(pred, label), spearman(pred, label)
    try:
        import scipy.stats
        assert abs(scipy.stats.pearsonr(pred, label)[0] - p) < 1e-12
        assert abs(scipy.stats.spearmanr(pred, label)[0] - s) < 1e-12
    except ImportError:
        pass
    return {"name": name, "task": "stsb", "predictions": list(map(float, pred)), "labels": label,
            "expected": {"pearson": p, "spearmanr": s, "combined_score": (p + s) / 2}}


def main():
    rng = np.random.default_rng(19)
    cases = [
        class_case("cola_hand", "cola", [1, 1, 0, 1, 0, 0, 1], [1, 0, 0, 1, 1, 0, 1], 2),
        class_case("cola_constant_prediction", "cola", [1] * 6, [1, 0, 1, 1, 0, 1], 2),
        class_case("cola_constant_labels", "cola", [1, 0, 1, 0], [0, 0, 0, 0], 2),
        class_case("cola_all_wrong", "cola", [1, 0, 1, 0], [0, 1, 0, 1], 2),
        class_case("cola_random", "cola", rng.integers(0, 2, 200), rng.integers(0, 2, 200), 2),
        class_case("cola_three_classes", "cola", rng.integers(0, 3, 150), rng.integers(0, 3, 150), 3),
        class_case("mrpc_random", "mrpc", rng.integers(0, 2, 120), rng.integers(0, 2, 120), 2),
        class_case("qqp_no_positive_prediction", "qqp", [0, 0, 0, 0], [1, 0, 1, 0], 2),
        class_case("mnli_random", "mnli", rng.integers(0, 3, 90), rng.integers(0, 3, 90), 3),
        class_case("sst2_hand", "sst2", [0, 1, 1, 0], [0, 1, 0, 0], 2),
        regression_case("stsb_hand", [0.5, 2.0, 3.5, 1.0, 4.25], [1.0, 2.2, 3.0, 0.4, 5.0]),
        # Ties on both sides: Spearman's average ranks matter.
        regression_case("stsb_ties", [1.0, 2.0, 2.0, 3.0, 3.0, 3.0, 0.5, 4.0],
                        [0.0, 1.0, 1.0, 1.0, 2.5, 2.5, 0.0, 5.0]),
        regression_case("stsb_random", list(rng.normal(2.5, 1.2, 300)),
                        list(np.round(rng.uniform(0, 5, 300), 1))),
    ]
    path = os.path.join(os.path.dirname(__file__), "..", "data", "glue", "metrics.json")
    with open(path, "w") as f:
        json.dump(cases, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
