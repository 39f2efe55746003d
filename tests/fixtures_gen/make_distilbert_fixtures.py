#!/usr/bin/env python3
"""Golden fixtures for Kiln's DistilBERT: tiny random DistilBertForSequenceClassification,
DistilBertForQuestionAnswering, DistilBertForTokenClassification and DistilBertForMaskedLM models
saved by `transformers` into tests/data/distilbert/<name>/ (config.json, model.safetensors), and
in expected.safetensors a right-padded batch with its attention mask, the labels, the logits, the
loss and every parameter's gradient (`distilbert_heads_test`).

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
import sys

import torch
import transformers
from safetensors.torch import save_file
from transformers import (DistilBertConfig, DistilBertForMaskedLM,
                          DistilBertForQuestionAnswering, DistilBertForSequenceClassification,
                          DistilBertForTokenClassification)

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from make_bert_fixtures import BATCH, LENGTHS, ROOT, SEQ  # noqa: E402

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
    out = model(**batch)
    out.loss.backward()
    expected = {key: value.contiguous() for key, value in batch.items()}
    for key in ("logits", "start_logits", "end_logits"):
        if getattr(out, key, None) is not None:
            expected[key] = getattr(out, key).detach().contiguous()
    expected["loss"] = out.loss.detach().reshape(()).contiguous()
    for param_name, param in model.named_parameters():
        expected["grad." + param_name] = param.grad.detach().contiguous()
    # safetensors sorts tensors by name; the metadata keeps HF's named_parameters() order.
    order = ",".join(param_name for param_name, _ in model.named_parameters())
    save_file(expected, folder / "expected.safetensors", metadata={"parameter_order": order})
    sizes = ", ".join(f"{p.name} {p.stat().st_size // 1024} KB" for p in sorted(folder.iterdir()))
    print(f"{name} (torch {torch.__version__}, transformers {transformers.__version__}): "
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
    pairs = [(key, getattr(out, key)) for key in ("logits", "start_logits", "end_logits")
             if getattr(out, key, None) is not None]
    pairs += [("grad." + n, p.grad) for n, p in model.named_parameters()]
    worst = 0.0
    for key, value in pairs:
        if value.abs().max() < 1e-12:
            continue  # zero in exact arithmetic (key biases, ...): f32 keeps only rounding noise
        reference = expected[key].double()
        worst = max(worst, ((value - reference).abs().max() / reference.abs().max()).item())
    return worst


def main():
    for name, (model_class, spec, seed) in FIXTURES.items():
        make_fixture(name, model_class, spec, seed)


if __name__ == "__main__":
    main()
