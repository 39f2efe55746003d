#!/usr/bin/env python3
"""Records run_ner.py's features for tests/ner_features_test.cpp.

Writes tests/data/ner/features.json: word lists (the first rows of data/ner/austen-ner-train.jsonl
and adversarial words: punctuation inside words, empty and blank words, accents, combining marks,
CJK, emoji, control characters, a special token typed as a word, a long word) tokenized with
is_split_into_words=True by
  - BertTokenizerFast on data/vocab/bert-base-uncased-vocab.txt and austen-wordpiece-8k.txt,
  - RobertaTokenizerFast on tests/fixtures/tokenizer_bpe/roberta with add_prefix_space=True
    (as run_ner.py loads RoBERTa's and GPT-2's tokenizers),
at max_seq_length 128 and, for truncation inside words, 12; each case with input_ids, word_ids
and run_ner.py's labels with and without --label_all_tokens (tokenize_and_align_labels below is
run_ner.py's, transformers examples/pytorch/token-classification/run_ner.py, with its label_list
from get_label_list and its b_to_i_label map). The bert-base-uncased cases also get random
logits and what run_ner.py's compute_metrics hands to seqeval from them: true_predictions and
true_labels (the argmax tags and the reference tags at the tokens whose label is not -100).

Needs transformers and tokenizers (no torch; recorded with transformers 5.25, tokenizers 0.23: the
RoBERTa tokenizer.json needs tokenizers 0.20 or later); CI only reads the committed output.
"""
import json
import pathlib
import random

import numpy as np
from transformers import AutoTokenizer, BertTokenizerFast

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "tests/data/ner/features.json"
VOCABS = ROOT / "data/vocab"
TRAIN_ROWS = 40

ADVERSARIAL = [
    (["Mr.", "Darcy's", "U.S.A.", "don't", "--", "well-bred", "(Bath)"],
     ["B-PER", "I-PER", "B-LOC", "O", "O", "O", "B-LOC"]),
    (["", "Emma", " ", "Woodhouse", "\t"], ["O", "B-PER", "O", "I-PER", "O"]),
    (["Caf\u00e9", "na\u00efve", "e\u0301te\u0301", "\u00c5ngstr\u00f6m"],
     ["B-LOC", "O", "O", "B-MISC"]),
    (["\u6771\u4eac", "\u3067", "Anne", "\U0001F600\U0001F3FB", "\u200b", "x\u0007y"],
     ["B-LOC", "O", "B-PER", "O", "O", "O"]),
    (["[SEP]", "<s>", "New York", "Kellynch-Hall", "Captain", "Wentworth"],
     ["O", "O", "B-LOC", "B-LOC", "B-PER", "I-PER"]),
    (["Supercalifragilisticexpialidocious" * 3, "antidisestablishmentarianism", "Elliot"],
     ["B-MISC", "O", "B-PER"]),
]


def get_label_list(labels):
    """run_ner.py's."""
    unique_labels = set()
    for label in labels:
        unique_labels = unique_labels | set(label)
    label_list = list(unique_labels)
    label_list.sort()
    return label_list


def align(tokenizer, words, tags, label_list, max_seq_length, label_all_tokens):
    """run_ner.py's tokenize_and_align_labels for one example."""
    label_to_id = {l: i for i, l in enumerate(label_list)}
    b_to_i_label = []
    for idx, label in enumerate(label_list):
        if label.startswith("B-") and label.replace("B-", "I-") in label_list:
            b_to_i_label.append(label_list.index(label.replace("B-", "I-")))
        else:
            b_to_i_label.append(idx)
    tokenized_inputs = tokenizer([words], padding=False, truncation=True,
                                 max_length=max_seq_length, is_split_into_words=True)
    word_ids = tokenized_inputs.word_ids(batch_index=0)
    previous_word_idx = None
    label_ids = []
    for word_idx in word_ids:
        if word_idx is None:
            label_ids.append(-100)
        elif word_idx != previous_word_idx:
            label_ids.append(label_to_id[tags[word_idx]])
        else:
            if label_all_tokens:
                label_ids.append(b_to_i_label[label_to_id[tags[word_idx]]])
            else:
                label_ids.append(-100)
        previous_word_idx = word_idx
    return tokenized_inputs["input_ids"][0], word_ids, label_ids


def compute_metrics_inputs(logits, labels, label_list):
    """run_ner.py's compute_metrics up to metric.compute, for one example."""
    predictions = np.argmax(np.array(logits), axis=1)
    true_predictions = [label_list[p] for (p, l) in zip(predictions, labels) if l != -100]
    true_labels = [label_list[l] for (p, l) in zip(predictions, labels) if l != -100]
    return true_predictions, true_labels


def main():
    rng = random.Random(17)
    rows = []
    with open(ROOT / "data/ner/austen-ner-train.jsonl", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            rows.append((row["tokens"], row["ner_tags"]))
            if len(rows) == TRAIN_ROWS:
                break
    examples = rows + ADVERSARIAL
    label_list = get_label_list(tags for _, tags in examples)
    tokenizers = {
        # The vocabulary positionally: transformers 4's vocab_file, 5's vocab.
        "bert-base-uncased": BertTokenizerFast(str(VOCABS / "bert-base-uncased-vocab.txt")),
        "austen-wordpiece-8k": BertTokenizerFast(str(VOCABS / "austen-wordpiece-8k.txt")),
        "roberta": AutoTokenizer.from_pretrained(
            str(ROOT / "tests/fixtures/tokenizer_bpe/roberta"), add_prefix_space=True),
    }
    cases = []
    for name, tokenizer in tokenizers.items():
        for max_seq_length in (128, 12):
            for words, tags in examples:
                ids, word_ids, labels = align(tokenizer, words, tags, label_list,
                                              max_seq_length, False)
                ids_all, word_ids_all, labels_all = align(tokenizer, words, tags, label_list,
                                                          max_seq_length, True)
                assert ids == ids_all and word_ids == word_ids_all
                case = {"tokenizer": name, "max_seq_length": max_seq_length,
                        "words": words, "tags": tags, "input_ids": ids,
                        "word_ids": [-1 if w is None else w for w in word_ids],
                        "labels": labels, "labels_all_tokens": labels_all}
                if name == "bert-base-uncased" and max_seq_length == 128:
                    # Few distinct values, so that ties (numpy takes the first) occur.
                    logits = [[rng.choice([-1.0, 0.0, 0.5, 1.0]) for _ in label_list]
                              for _ in ids]
                    case["logits"] = logits
                    for key, aligned in (("", labels), ("_all_tokens", labels_all)):
                        predicted, reference = compute_metrics_inputs(logits, aligned,
                                                                      label_list)
                        case["true_predictions" + key] = predicted
                        case["true_labels" + key] = reference
                cases.append(case)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump({"label_list": label_list, "cases": cases}, f, ensure_ascii=False)
        f.write("\n")
    print(f"wrote {len(cases)} cases to {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
