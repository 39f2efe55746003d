"""seqeval fixtures for seqeval_metrics_test: the numbers run_ner.py reports (evaluate's "seqeval"
metric: seqeval 1.2.2's classification_report(output_dict=True) per entity type, its micro average
as overall precision/recall/F1, and accuracy_score), computed by seqeval itself on hand-made cases
(the README's example, I- after O, a type switch inside a chunk, IOBES tags, no entities at all,
types only predicted) and random tag sequences. Writes tests/data/seqeval/cases.json with every
number as Python's repr, so that the test compares every digit.

seqeval is not a dependency of Kiln: fetch its source once from PyPI and run it with Debian's
python3 (numpy). Of scikit-learn, seqeval imports only the class of a warning; without
scikit-learn, that class is made here.
    pip download seqeval==1.2.2 --no-deps -d /tmp/seqeval && tar xzf /tmp/seqeval/*.tar.gz -C /tmp
    PYTHONPATH=/tmp/seqeval-1.2.2 /usr/bin/python3 tests/fixtures_gen/make_seqeval_fixtures.py
"""
import json
import os
import random
import sys
import types
import warnings

try:
    import sklearn.exceptions  # noqa: F401
except ImportError:
    class UndefinedMetricWarning(UserWarning):
        pass
    sys.modules["sklearn"] = types.ModuleType("sklearn")
    sys.modules["sklearn.exceptions"] = types.ModuleType("sklearn.exceptions")
    sys.modules["sklearn.exceptions"].UndefinedMetricWarning = UndefinedMetricWarning

from seqeval.metrics import accuracy_score, classification_report


def seqeval_numbers(references, predictions):
    # evaluate's seqeval metric (evaluate/metrics/seqeval/seqeval.py), with its defaults.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zero divisions are 0, as "warn" gives them
        report = classification_report(references, predictions, output_dict=True)
    report.pop("macro avg")
    report.pop("weighted avg")
    overall = report.pop("micro avg")
    types = {
        name: {"precision": float(score["precision"]), "recall": float(score["recall"]),
               "f1": float(score["f1-score"]), "number": int(score["support"])}
        for name, score in report.items()
    }
    return {
        "types": types,
        "overall_precision": float(overall["precision"]),
        "overall_recall": float(overall["recall"]),
        "overall_f1": float(overall["f1-score"]),
        "overall_accuracy": float(accuracy_score(references, predictions)),
    }


HAND_MADE = [
    ("readme", [["O", "O", "O", "B-MISC", "I-MISC", "I-MISC", "O"], ["B-PER", "I-PER", "O"]],
     [["O", "O", "B-MISC", "I-MISC", "I-MISC", "I-MISC", "O"], ["B-PER", "I-PER", "O"]]),
    ("inside_after_outside", [["O", "I-PER", "I-PER", "O", "B-LOC"]],
     [["O", "B-PER", "I-PER", "O", "I-LOC"]]),
    ("type_switch", [["B-PER", "I-LOC", "I-LOC", "O"], ["B-ORG", "B-ORG", "I-ORG"]],
     [["B-PER", "I-PER", "I-LOC", "O"], ["B-ORG", "I-ORG", "I-ORG"]]),
    ("iobes", [["S-PER", "O", "B-LOC", "E-LOC", "B-ORG", "I-ORG", "E-ORG"]],
     [["S-PER", "O", "B-LOC", "I-LOC", "B-ORG", "I-ORG", "E-ORG"]]),
    ("no_entities", [["O", "O"], ["O"]], [["O", "O"], ["O"]]),
    ("only_predicted", [["O", "O", "O"]], [["B-PER", "O", "B-LOC"]]),
    ("chunk_across_sentences", [["O", "B-PER"], ["I-PER", "O"]], [["O", "B-PER"], ["B-PER", "O"]]),
]


def random_tags(rng, length, types):
    tags = []
    for _ in range(length):
        r = rng.random()
        tags.append("O" if r < 0.5 else ("B-" if r < 0.75 else "I-") + rng.choice(types))
    return tags


def main():
    rng = random.Random(17)
    cases = []
    for name, references, predictions in HAND_MADE:
        cases.append({"name": name, "references": references, "predictions": predictions})
    types = ["PER", "LOC", "ORG", "MISC"]
    for index in range(6):
        references, predictions = [], []
        for _ in range(rng.randint(1, 12)):
            length = rng.randint(1, 15)
            references.append(random_tags(rng, length, types))
            # Mostly right, as a trained tagger: each tag kept with probability 0.7.
            guess = random_tags(rng, length, types)
            predictions.append([t if rng.random() < 0.7 else g
                                for t, g in zip(references[-1], guess)])
        cases.append({"name": "random%d" % index, "references": references,
                      "predictions": predictions})
    for case in cases:
        case["expected"] = seqeval_numbers(case["references"], case["predictions"])
    out = os.path.join(os.path.dirname(__file__), "..", "data", "seqeval", "cases.json")
    with open(out, "w") as f:
        json.dump(cases, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
