#!/usr/bin/env python3
"""Golden fixtures for Kiln's DistilBERT: tiny random DistilBertForSequenceClassification,
DistilBertForQuestionAnswering, DistilBertForTokenClassification and DistilBertForMaskedLM models
saved by `transformers` into tests/data/distilbert/<name>/ (config.json, model.safetensors), and
in expected.safetensors a right-padded batch with its attention mask, the labels, the logits, the
loss and every parameter's gradient (`distilbert_heads_test`); and in configs/ the config.json
texts of transformers' defaults and of its attribute_map aliases (`distilbert_config_test`); in
tokenizer/ a DistilBertTokenizer's files and its encodings (`distilbert_tokenizer_test`).

Conventions of make_bert_fixtures.py (whose batch shape this imports): weights re-drawn wider than
HF's initializer (biases and LayerNorm parameters too) so that every path carries a visible
signal, eval mode (no dropout), eager attention, fp32. Sizes are odd and differ per head; the
heads use gelu, relu and gelu_new activations. The masked-LM projector is tied to the word
embeddings, so their gradient has both parts.

Usage (PyPI packages; CI does not need them):
  pip install torch transformers safetensors
  python3 tests/fixtures_gen/make_distilbert_fixtures.py
Kiln-saved DistilBERT models are checked in transformers by
make_bert_fixtures.py --check-kiln-export (transformers_export_test).
"""
import json
import sys

import torch
from transformers import (DistilBertConfig, DistilBertForMaskedLM,
                          DistilBertForQuestionAnswering, DistilBertForSequenceClassification,
                          DistilBertForTokenClassification, DistilBertTokenizer)

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from make_bert_fixtures import BATCH, LENGTHS, ROOT, SEQ, save_expected  # noqa: E402

OUT = ROOT / "tests/data/distilbert"

# name: (model class, config sizes, seed)
FIXTURES = {
    # Single-label classification (integer labels): pre_classifier, ReLU, classifier.
    "classifier": (DistilBertForSequenceClassification,
                   dict(dim=30, n_layers=2, n_heads=5, hidden_dim=37, num_labels=3), 3000),
    # Multi-label BCE chosen by problem_type; relu FFN activation, 3 heads of 7.
    "multi_label": (DistilBertForSequenceClassification,
                    dict(dim=21, n_layers=2, n_heads=3, hidden_dim=29, num_labels=4,
                         activation="relu", problem_type="multi_label_classification"), 3001),
    "qa": (DistilBertForQuestionAnswering,
           dict(dim=24, n_layers=2, n_heads=4, hidden_dim=31), 3002),
    "token": (DistilBertForTokenClassification,
              dict(dim=18, n_layers=3, n_heads=3, hidden_dim=23, num_labels=5), 3003),
    "mlm": (DistilBertForMaskedLM,
            dict(dim=20, n_layers=2, n_heads=4, hidden_dim=27, activation="gelu_new"), 3004),
}


def make_config(spec):
    return DistilBertConfig(vocab_size=101, max_position_embeddings=40, dropout=0.1,
                            attention_dropout=0.1, attn_implementation="eager", **spec)


def randomize(model, generator):
    """Wider weights than HF's init; the padding row of the word embeddings stays zero."""
    with torch.no_grad():
        for name, param in model.named_parameters():
            noise = torch.randn(param.shape, generator=generator)
            norm = "LayerNorm" in name or "layer_norm" in name
            if norm and name.endswith("weight"):
                param.copy_(1.0 + 0.2 * noise)
            elif norm or name.endswith("bias"):
                param.copy_(0.1 * noise)
            else:
                param.copy_(0.3 * noise)
        model.distilbert.embeddings.word_embeddings.weight[model.config.pad_token_id].zero_()


def make_inputs(config, generator):
    """Right-padded rows of LENGTHS real tokens; ids 0 (the padding id) only in the padding."""
    input_ids = torch.randint(1, config.vocab_size, (BATCH, SEQ), generator=generator)
    attention_mask = torch.zeros(BATCH, SEQ, dtype=torch.long)
    for row, length in enumerate(LENGTHS):
        attention_mask[row, :length] = 1
        input_ids[row, length:] = config.pad_token_id
    input_ids[:, 0] = 2  # a [CLS]-like first token
    return dict(input_ids=input_ids, attention_mask=attention_mask)


def labels_for(model, config, generator):
    if isinstance(model, DistilBertForQuestionAnswering):
        # Row 1's start lies past the sequence (clamped to SEQ, ignored); row 2's end is -3
        # (clamped to 0, a real label).
        return dict(start_positions=torch.tensor([2, SEQ + 2, 1]),
                    end_positions=torch.tensor([4, 3, -3]))
    if isinstance(model, DistilBertForSequenceClassification):
        if config.problem_type == "multi_label_classification":
            shape = (BATCH, config.num_labels)
            return dict(labels=torch.randint(0, 2, shape, generator=generator).float())
        return dict(labels=torch.randint(0, config.num_labels, (BATCH,), generator=generator))
    # Token classification labels every real token but one; masked LM every other real token.
    # Padding positions are -100, as the collators write them.
    classes = config.num_labels if isinstance(model, DistilBertForTokenClassification) \
        else config.vocab_size
    step = 1 if isinstance(model, DistilBertForTokenClassification) else 2
    labels = torch.full((BATCH, SEQ), -100, dtype=torch.long)
    for row, length in enumerate(LENGTHS):
        for position in range(row % 2, length, step):
            labels[row, position] = int(torch.randint(0, classes, (1,), generator=generator))
    labels[0, 3] = -100
    return dict(labels=labels)


def make_fixture(name, model_class, spec, seed):
    generator = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    config = make_config(spec)
    model = model_class(config)
    randomize(model, generator)
    model.eval()
    folder = OUT / name
    folder.mkdir(parents=True, exist_ok=True)
    # Saved before the forward pass, which writes an inferred problem_type into the config.
    model.save_pretrained(folder, safe_serialization=True)
    batch = make_inputs(config, generator)
    batch.update(labels_for(model, config, generator))
    save_expected(model, batch, folder)


# A config.json naming sizes by DistilBertConfig.attribute_map's aliases only.
ALIASED = {"model_type": "distilbert", "hidden_size": 48, "num_attention_heads": 4,
           "num_hidden_layers": 3, "hidden_dim": 50, "num_labels": 3}


def make_config_fixtures():
    """configs/defaults.json: DistilBertConfig()'s every field; configs/aliased.json and
    configs/aliased_read.json: a config with aliases, and every field transformers reads from it
    (`distilbert_config_test`)."""
    folder = OUT / "configs"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "defaults.json").write_text(DistilBertConfig().to_json_string(use_diff=False))
    (folder / "aliased.json").write_text(json.dumps(ALIASED, indent=2) + "\n")
    read = DistilBertConfig.from_json_file(folder / "aliased.json")
    (folder / "aliased_read.json").write_text(read.to_json_string(use_diff=False))
    print(f"configs: aliased reads as dim {read.dim}, n_heads {read.n_heads}, "
          f"n_layers {read.n_layers}")


# A tiny WordPiece vocabulary, and texts encoded with it: single texts and pairs, each kind
# padded as one batch.
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "quick", "brown", "fox", "##es",
         "jump", "##ed", "over", "lazy", "dog", ".", ",", "caf", "##e", "!"]
SINGLES = ["The quick brown foxes jumped.", "Foxes, dogs!"]
PAIRS = [["Over the LAZY dog!", "the café, jumped"], ["Foxes.", "quick"]]


def make_tokenizer_fixture():
    """tokenizer/: DistilBertTokenizer's files as transformers saves them (tokenizer.json and
    tokenizer_config.json, whose class returns no token_type_ids), and encodings.json: what the
    tokenizer returns for SINGLES and PAIRS, each padded as one batch
    (`distilbert_tokenizer_test`)."""
    folder = OUT / "tokenizer"
    tokenizer = DistilBertTokenizer(vocab={token: i for i, token in enumerate(VOCAB)})
    tokenizer.save_pretrained(folder)
    singles = tokenizer(SINGLES, padding=True)
    pairs = tokenizer([a for a, _ in PAIRS], [b for _, b in PAIRS], padding=True)
    encodings = dict(singles=SINGLES, pairs=PAIRS, model_input_names=tokenizer.model_input_names,
                     keys=sorted(pairs.keys()), single_input_ids=singles["input_ids"],
                     single_attention_mask=singles["attention_mask"],
                     pair_input_ids=pairs["input_ids"],
                     pair_attention_mask=pairs["attention_mask"])
    (folder / "encodings.json").write_text(json.dumps(encodings) + "\n")
    print(f"tokenizer: {tokenizer.model_input_names}, keys {encodings['keys']}")


def main():
    for name, (model_class, spec, seed) in FIXTURES.items():
        make_fixture(name, model_class, spec, seed)
    make_config_fixtures()
    make_tokenizer_fixture()


if __name__ == "__main__":
    main()
