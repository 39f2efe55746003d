#!/usr/bin/env python3
"""Question-answering fixtures: run_qa.py's features and utils_qa.py's post-processing on real
SQuAD questions with BertTokenizerFast (data/vocab/bert-base-uncased-vocab.txt).

prepare_train_features / prepare_validation_features and postprocess_qa_predictions below are
those of transformers' examples/pytorch/question-answering (run_qa.py, utils_qa.py), with the
`datasets` plumbing replaced by lists; their logic is unchanged. Logits are random float32 rows,
one per feature over its own tokens.

Writes tests/data/squad/qa/: features.json (per feature: question id, input_ids, token_type_ids,
offsets in the context or null, start and end positions) and postprocess.json (the logits and
the predictions, n-best lists and null odds for v1 and v2 settings). Run from the repository
root: python3 tests/fixtures_gen/make_qa_fixtures.py (pip: transformers, tokenizers, numpy).
"""
import collections
import json
import pathlib

import numpy as np
from transformers import BertTokenizerFast

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "tests/data/squad/qa"
MAX_SEQ_LENGTH, DOC_STRIDE = 96, 32


def load_examples():
    """The first 12 questions of the v1.1 train file and the 14 of the flat v2 sample."""
    examples = []
    nested = json.loads((ROOT / "data/qa/squad-v1.1-train-first8.json").read_text(encoding="utf-8"))
    for article in nested["data"]:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                examples.append({"id": qa["id"], "question": qa["question"],
                                 "context": paragraph["context"], "answers": {
                                     "text": [a["text"] for a in qa["answers"]],
                                     "answer_start": [a["answer_start"] for a in qa["answers"]]}})
    examples = examples[:12]
    flat = json.loads((ROOT / "data/qa/squad-v2-sample.json").read_text(encoding="utf-8"))
    examples += flat["data"]
    # Leading whitespace in a question (run_qa.py strips it) and an answer at the very end.
    examples[0] = dict(examples[0], question="  \t" + examples[0]["question"])
    return examples


def prepare_train_features(tokenizer, examples):
    questions = [e["question"].lstrip() for e in examples]
    tokenized = tokenizer(questions, [e["context"] for e in examples], truncation="only_second",
                          max_length=MAX_SEQ_LENGTH, stride=DOC_STRIDE,
                          return_overflowing_tokens=True, return_offsets_mapping=True,
                          padding=False)
    sample_mapping = tokenized.pop("overflow_to_sample_mapping")
    offset_mapping = tokenized.pop("offset_mapping")
    tokenized["start_positions"] = []
    tokenized["end_positions"] = []
    for i, offsets in enumerate(offset_mapping):
        input_ids = tokenized["input_ids"][i]
        cls_index = input_ids.index(tokenizer.cls_token_id) if tokenizer.cls_token_id in input_ids else 0
        sequence_ids = tokenized.sequence_ids(i)
        answers = examples[sample_mapping[i]]["answers"]
        if len(answers["answer_start"]) == 0:
            tokenized["start_positions"].append(cls_index)
            tokenized["end_positions"].append(cls_index)
        else:
            start_char = answers["answer_start"][0]
            end_char = start_char + len(answers["text"][0])
            token_start_index = 0
            while sequence_ids[token_start_index] != 1:
                token_start_index += 1
            token_end_index = len(input_ids) - 1
            while sequence_ids[token_end_index] != 1:
                token_end_index -= 1
            if not (offsets[token_start_index][0] <= start_char and
                    offsets[token_end_index][1] >= end_char):
                tokenized["start_positions"].append(cls_index)
                tokenized["end_positions"].append(cls_index)
            else:
                while token_start_index < len(offsets) and offsets[token_start_index][0] <= start_char:
                    token_start_index += 1
                tokenized["start_positions"].append(token_start_index - 1)
                while offsets[token_end_index][1] >= end_char:
                    token_end_index -= 1
                tokenized["end_positions"].append(token_end_index + 1)
    features = []
    for i in range(len(tokenized["input_ids"])):
        sequence_ids = tokenized.sequence_ids(i)
        features.append({
            "example_id": examples[sample_mapping[i]]["id"],
            "input_ids": tokenized["input_ids"][i],
            "token_type_ids": tokenized["token_type_ids"][i],
            # prepare_validation_features: offsets outside the context become None.
            "offset_mapping": [list(o) if sequence_ids[k] == 1 else None
                               for k, o in enumerate(offset_mapping[i])],
            "start_position": tokenized["start_positions"][i],
            "end_position": tokenized["end_positions"][i],
        })
    return features


def postprocess_qa_predictions(examples, features, predictions, version_2_with_negative=False,
                               n_best_size=20, max_answer_length=30,
                               null_score_diff_threshold=0.0):
    all_start_logits, all_end_logits = predictions
    example_id_to_index = {k: i for i, k in enumerate(e["id"] for e in examples)}
    features_per_example = collections.defaultdict(list)
    for i, feature in enumerate(features):
        features_per_example[example_id_to_index[feature["example_id"]]].append(i)
    all_predictions = collections.OrderedDict()
    all_nbest_json = collections.OrderedDict()
    scores_diff_json = collections.OrderedDict()
    for example_index, example in enumerate(examples):
        feature_indices = features_per_example[example_index]
        min_null_prediction = None
        prelim_predictions = []
        for feature_index in feature_indices:
            start_logits = all_start_logits[feature_index]
            end_logits = all_end_logits[feature_index]
            offset_mapping = features[feature_index]["offset_mapping"]
            feature_null_score = start_logits[0] + end_logits[0]
            if min_null_prediction is None or min_null_prediction["score"] > feature_null_score:
                min_null_prediction = {"offsets": (0, 0), "score": feature_null_score,
                                       "start_logit": start_logits[0], "end_logit": end_logits[0]}
            start_indexes = np.argsort(start_logits)[-1: -n_best_size - 1: -1].tolist()
            end_indexes = np.argsort(end_logits)[-1: -n_best_size - 1: -1].tolist()
            for start_index in start_indexes:
                for end_index in end_indexes:
                    if (start_index >= len(offset_mapping) or end_index >= len(offset_mapping)
                            or offset_mapping[start_index] is None
                            or len(offset_mapping[start_index]) < 2
                            or offset_mapping[end_index] is None
                            or len(offset_mapping[end_index]) < 2):
                        continue
                    if end_index < start_index or end_index - start_index + 1 > max_answer_length:
                        continue
                    prelim_predictions.append({
                        "offsets": (offset_mapping[start_index][0], offset_mapping[end_index][1]),
                        "score": start_logits[start_index] + end_logits[end_index],
                        "start_logit": start_logits[start_index],
                        "end_logit": end_logits[end_index]})
        if version_2_with_negative and min_null_prediction is not None:
            prelim_predictions.append(min_null_prediction)
            null_score = min_null_prediction["score"]
        predictions = sorted(prelim_predictions, key=lambda x: x["score"], reverse=True)[:n_best_size]
        if (version_2_with_negative and min_null_prediction is not None
                and not any(p["offsets"] == (0, 0) for p in predictions)):
            predictions.append(min_null_prediction)
        context = example["context"]
        for pred in predictions:
            offsets = pred.pop("offsets")
            pred["text"] = context[offsets[0]: offsets[1]]
        if len(predictions) == 0 or (len(predictions) == 1 and predictions[0]["text"] == ""):
            predictions.insert(0, {"text": "empty", "start_logit": 0.0, "end_logit": 0.0, "score": 0.0})
        scores = np.array([pred.pop("score") for pred in predictions])
        exp_scores = np.exp(scores - np.max(scores))
        probs = exp_scores / exp_scores.sum()
        for prob, pred in zip(probs, predictions):
            pred["probability"] = prob
        if not version_2_with_negative:
            all_predictions[example["id"]] = predictions[0]["text"]
        else:
            i = 0
            while predictions[i]["text"] == "":
                i += 1
            best_non_null_pred = predictions[i]
            score_diff = null_score - best_non_null_pred["start_logit"] - best_non_null_pred["end_logit"]
            scores_diff_json[example["id"]] = float(score_diff)
            if score_diff > null_score_diff_threshold:
                all_predictions[example["id"]] = ""
            else:
                all_predictions[example["id"]] = best_non_null_pred["text"]
        all_nbest_json[example["id"]] = [
            {k: (float(v) if isinstance(v, (np.float16, np.float32, np.float64)) else v)
             for k, v in pred.items()} for pred in predictions]
    return all_predictions, all_nbest_json, scores_diff_json


def float32_list(values):
    """Shortest decimals that give back each float32 (json.dumps would print 17 digits)."""
    return "[" + ",".join(np.format_float_positional(v, unique=True, trim="0") for v in values) + "]"


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    # transformers 5 takes the vocabulary file as `vocab` (vocab_file is ignored).
    tokenizer = BertTokenizerFast(vocab=str(ROOT / "data/vocab/bert-base-uncased-vocab.txt"))
    examples = load_examples()
    features = prepare_train_features(tokenizer, examples)
    with open(OUT / "examples.jsonl", "w", encoding="utf-8") as f:
        for example in examples:
            f.write(json.dumps(example, ensure_ascii=False) + "\n")
    (OUT / "features.json").write_text(json.dumps({
        "max_seq_length": MAX_SEQ_LENGTH, "doc_stride": DOC_STRIDE, "features": features},
        separators=(",", ":")) + "\n")

    rng = np.random.default_rng(7)
    starts = [rng.normal(size=len(f["input_ids"])).astype(np.float32) * 3 for f in features]
    ends = [rng.normal(size=len(f["input_ids"])).astype(np.float32) * 3 for f in features]
    cases = []
    for v2, n_best, max_len, threshold in [(False, 20, 30, 0.0), (False, 5, 4, 0.0),
                                           (True, 20, 30, 0.0), (True, 7, 10, -1.5)]:
        predictions, nbest, null_odds = postprocess_qa_predictions(
            examples, features, (starts, ends), v2, n_best, max_len, threshold)
        cases.append({"version_2_with_negative": v2, "n_best_size": n_best,
                      "max_answer_length": max_len, "null_score_diff_threshold": threshold,
                      "predictions": predictions, "null_odds": null_odds,
                      "nbest_texts": {k: [p["text"] for p in v[:5]] for k, v in nbest.items()},
                      "nbest_probabilities": {k: [p["probability"] for p in v[:3]]
                                              for k, v in nbest.items()}})
    logits = ",\n".join(f'[{float32_list(s)},{float32_list(e)}]' for s, e in zip(starts, ends))
    (OUT / "postprocess.json").write_text(
        '{"logits": [\n' + logits + '],\n"cases": ' + json.dumps(cases, ensure_ascii=False) + "}\n")
    print(f"{len(examples)} questions, {len(features)} features")


if __name__ == "__main__":
    main()
