#!/usr/bin/env python3
"""Golden fixtures for Kiln's BERT: tiny random BertForSequenceClassification models saved by
`transformers` into tests/data/bert/<name>/ (config.json, model.safetensors), and in
expected.safetensors a fixed batch with the logits, the loss and every parameter's gradient.

The weights are re-drawn with larger spreads than HF's initializer (biases and LayerNorm
parameters too), so that every path carries a visible signal. Dropout is off (eval mode) and
attention is the "eager" implementation (additive finfo.min mask), the path Kiln reproduces.

Usage (PyPI packages; CI does not need them):
  pip install torch transformers safetensors
  python3 tests/fixtures_gen/make_bert_fixtures.py
  python3 tests/fixtures_gen/make_bert_fixtures.py --check-kiln-export DIR [DIR ...]
  python3 tests/fixtures_gen/make_bert_fixtures.py --check-kiln-predictions DIR TSV JSONL
The second form (run by tests/transformers_export_test.cpp) loads each model that Kiln saved
(DIR/config.json, DIR/model.safetensors; BERT, DistilBERT, RoBERTa, XLM-RoBERTa or ELECTRA) in
transformers with the class config.json names, runs the batch in DIR/kiln_outputs.safetensors
and compares each output with Kiln's. The third (run by tests/cli_train_test.cpp) loads a
classifier `kiln train` saved, with its tokenizer (AutoTokenizer), and compares its class
probabilities on the texts of TSV (label, source, text; 16 tokens at most) with those of
`kiln predict` in JSONL (predict_results.jsonl).
"""
import argparse
import json
import pathlib
import sys

import torch
import transformers
from safetensors.torch import load_file, save_file
from transformers import BertConfig, BertForSequenceClassification

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "tests/data/bert"

BATCH, SEQ = 3, 7
# The outputs of the heads' forward passes that fixtures record.
OUTPUTS = ("logits", "start_logits", "end_logits")
# Real lengths per row; the rest is padding (pad_token_id 0, attention_mask 0).
LENGTHS = [7, 5, 3]

FIXTURES = {
    # Single-label classification inferred from integer labels (problem_type unset).
    "tiny": dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                 intermediate_size=37, num_labels=3),
    # An odd head count (5 heads of 6), a non-default layer_norm_eps, a classifier_dropout key.
    "odd_heads": dict(hidden_size=30, num_hidden_layers=2, num_attention_heads=5,
                      intermediate_size=41, num_labels=2, layer_norm_eps=1e-5,
                      classifier_dropout=0.2),
    # num_labels = 1: regression (MSE) inferred, float labels.
    "regression": dict(hidden_size=24, num_hidden_layers=1, num_attention_heads=3,
                       intermediate_size=29, num_labels=1),
    # Multi-label BCE with logits, chosen by problem_type; float 0/1 labels.
    "multi_label": dict(hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=23, num_labels=4,
                        problem_type="multi_label_classification"),
}


def make_config(spec):
    return BertConfig(vocab_size=99, max_position_embeddings=64, type_vocab_size=2,
                      hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1,
                      attn_implementation="eager", **spec)


def randomize(model, generator):
    """Wider weights than HF's init so that no path is negligible; the padding row stays zero."""
    with torch.no_grad():
        for name, param in model.named_parameters():
            noise = torch.randn(param.shape, generator=generator)
            norm = "LayerNorm" in name or "layer_norm" in name  # BERT's and DistilBERT's names
            if norm and name.endswith("weight"):
                param.copy_(1.0 + 0.2 * noise)
            elif norm or name.endswith("bias"):
                param.copy_(0.1 * noise)
            else:
                param.copy_(0.3 * noise)
        model.base_model.embeddings.word_embeddings.weight[model.config.pad_token_id].zero_()


def make_batch(config, generator):
    input_ids = torch.randint(1, config.vocab_size, (BATCH, SEQ), generator=generator)
    attention_mask = torch.zeros(BATCH, SEQ, dtype=torch.long)
    token_type_ids = torch.zeros(BATCH, SEQ, dtype=torch.long)
    for row, length in enumerate(LENGTHS):
        attention_mask[row, :length] = 1
        input_ids[row, length:] = config.pad_token_id
        token_type_ids[row, length // 2:length] = 1  # a second segment
    input_ids[:, 0] = 2  # a [CLS]-like first token
    if config.num_labels == 1:
        labels = torch.randn(BATCH, generator=generator)
    elif config.problem_type == "multi_label_classification":
        labels = torch.randint(0, 2, (BATCH, config.num_labels), generator=generator).float()
    else:
        labels = torch.randint(0, config.num_labels, (BATCH,), generator=generator)
    return dict(input_ids=input_ids, token_type_ids=token_type_ids,
                attention_mask=attention_mask, labels=labels)


def make_fixture(name, spec, seed):
    generator = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    config = make_config(spec)
    model = BertForSequenceClassification(config)
    randomize(model, generator)
    model.eval()
    folder = OUT / name
    folder.mkdir(parents=True, exist_ok=True)
    # Saved before the forward pass, which writes an inferred problem_type into the config.
    model.save_pretrained(folder, safe_serialization=True)
    save_expected(model, make_batch(config, generator), folder)


def save_expected(model, batch, folder):
    """Runs `batch` (labels included) through `model`, backpropagates the loss, and writes
    folder/expected.safetensors: the batch, the outputs (logits, or start and end logits), the
    loss and every parameter's gradient; prints the loss and torch's own f32 error."""
    out = model(**batch)
    out.loss.backward()
    expected = {key: value.contiguous() for key, value in batch.items()}
    for key in OUTPUTS:
        if getattr(out, key, None) is not None:
            expected[key] = getattr(out, key).detach().contiguous()
    expected["loss"] = out.loss.detach().reshape(()).contiguous()
    for param_name, param in model.named_parameters():
        expected["grad." + param_name] = param.grad.detach().contiguous()
    # safetensors sorts tensors by name; the metadata keeps HF's named_parameters() order. One
    # key only: the library writes metadata from a hash map, so several keys come out shuffled.
    order = ",".join(name for name, _ in model.named_parameters())
    save_file(expected, folder / "expected.safetensors", metadata={"parameter_order": order})
    sizes = ", ".join(f"{p.name} {p.stat().st_size // 1024} KB" for p in sorted(folder.iterdir()))
    print(f"{folder.name} (torch {torch.__version__}, transformers {transformers.__version__}): "
          f"loss {out.loss.item():.6f}; {sizes}; "
          f"torch's own f32 error (vs f64): {f32_error(model, batch, expected):.2g}")


def f32_error(model, batch, expected):
    """Largest |f32 - f64| / max|f32| over outputs and gradients: the noise floor of a fixture."""
    model = model.double()
    model.zero_grad(set_to_none=True)
    batch = {key: value.double() if value.is_floating_point() else value
             for key, value in batch.items()}
    out = model(**batch)
    out.loss.backward()
    pairs = [(key, getattr(out, key)) for key in OUTPUTS if getattr(out, key, None) is not None]
    pairs += [("grad." + n, p.grad) for n, p in model.named_parameters()]
    worst = 0.0
    for key, value in pairs:
        if value.abs().max() < 1e-12:
            continue  # zero in exact arithmetic (key biases, ...): f32 keeps only rounding noise
        reference = expected[key].double()
        worst = max(worst, ((value - reference).abs().max() / reference.abs().max()).item())
    return worst


def check_kiln_export(folder):
    """Loads DIR in transformers with the class its config.json names; every output Kiln saved in
    kiln_outputs.safetensors (logits, start_logits, ...) must match, no weight may be missing."""
    folder = pathlib.Path(folder)
    config = transformers.AutoConfig.from_pretrained(folder)
    model_class = getattr(transformers, config.architectures[0])
    model, info = model_class.from_pretrained(folder, attn_implementation="eager",
                                              output_loading_info=True)
    model.eval()
    kiln = load_file(folder / "kiln_outputs.safetensors")
    inputs = {key: kiln[key] for key in ("input_ids", "token_type_ids", "attention_mask")
              if key in kiln}  # DistilBERT takes no token_type_ids
    with torch.no_grad():
        out = model(**inputs)
    ok = not info["missing_keys"] and not info["unexpected_keys"]
    print(f"{folder}: transformers {transformers.__version__} loads {model_class.__name__} "
          f"(problem_type {config.problem_type}); missing {info['missing_keys']}, "
          f"unexpected {info['unexpected_keys']}")
    for name in sorted(set(kiln) - set(inputs)):
        diff = (getattr(out, name) - kiln[name]).abs().max().item()
        scale = kiln[name].abs().max().item()
        close = diff <= 1e-5 * scale
        ok = ok and close
        print(f"  {name}: max |diff| = {diff:.3g} (max |value| {scale:.3g}): "
              f"{'OK' if close else 'MISMATCH'}")
    return ok


def check_kiln_predictions(folder, tsv, jsonl):
    """The class probabilities of DIR's classifier and tokenizer on the texts of TSV must be
    those Kiln predicted (JSONL) to 1e-5."""
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
    config = transformers.AutoConfig.from_pretrained(folder)
    model = getattr(transformers, config.architectures[0]).from_pretrained(
        folder, attn_implementation="eager").eval()
    with open(tsv, encoding="utf-8") as f:
        texts = [line.rstrip("\n").split("\t")[2] for line in f]
    inputs = tokenizer(texts, padding=True, truncation=True, max_length=16, return_tensors="pt")
    with torch.no_grad():
        probabilities = torch.softmax(model(**inputs).logits.double(), dim=-1)
    with open(jsonl, encoding="utf-8") as f:
        kiln = [json.loads(line)["probabilities"] for line in f]
    expected = torch.tensor([[row[config.id2label[i]] for i in range(config.num_labels)]
                             for row in kiln], dtype=torch.float64)
    diff = (probabilities - expected).abs().max().item()
    print(f"{folder}: {type(tokenizer).__name__} gives {sorted(inputs.keys())}; "
          f"{type(model).__name__}'s probabilities: max |diff| = {diff:.3g}: "
          f"{'OK' if diff <= 1e-5 else 'MISMATCH'}")
    return diff <= 1e-5


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check-kiln-export", metavar="DIR", nargs="+",
                        help="compare transformers' logits on Kiln-saved models with Kiln's")
    parser.add_argument("--check-kiln-predictions", metavar=("DIR", "TSV", "JSONL"), nargs=3,
                        help="compare a classifier Kiln trained with kiln predict's output")
    args = parser.parse_args()
    if args.check_kiln_predictions:
        sys.exit(0 if check_kiln_predictions(*args.check_kiln_predictions) else 1)
    if args.check_kiln_export:
        results = [check_kiln_export(folder) for folder in args.check_kiln_export]
        sys.exit(0 if all(results) else 1)
    for seed, (name, spec) in enumerate(FIXTURES.items()):
        make_fixture(name, spec, 1000 + seed)


if __name__ == "__main__":
    main()
