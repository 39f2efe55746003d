#!/usr/bin/env python3
"""Golden fixtures for Kiln's RoBERTa, XLM-RoBERTa and ELECTRA: tiny random models of every head
Kiln builds, saved by `transformers` into tests/data/<family>/<name>/ (config.json,
model.safetensors), and in expected.safetensors a right-padded batch with its attention mask, the
labels, the outputs (logits, start_logits, end_logits), the loss and every parameter's gradient
(`roberta_heads_test`, `electra_heads_test`).

Conventions of make_bert_fixtures.py (whose batch shape this imports): weights re-drawn wider than
HF's initializer (biases and LayerNorm parameters too) so that every path carries a visible
signal, padding rows of the embeddings zero, eval mode (no dropout), eager attention, fp32. Sizes
are odd and differ per head.

RoBERTa's batch starts each row with <s> (0) and pads with pad_token_id 1, so that its position
ids (counted from pad_token_id + 1 over the real tokens) differ from arange; its token type ids
are zeros (type_vocab_size 1). ELECTRA's embeddings are narrower than its hidden size
(embeddings_project) except in the QA model; its heads use gelu_new or relu as hidden_act where
the head's activation is fixed gelu, so that a wrong choice shows. The discriminator's labels of
padding tokens are 1, which its loss must ignore.

Usage (PyPI packages; CI does not need them):
  pip install torch transformers safetensors
  python3 tests/fixtures_gen/make_encoder_family_fixtures.py
Kiln-saved models of these families are checked in transformers by
make_bert_fixtures.py --check-kiln-export (transformers_export_test).
"""
import sys

import torch
from transformers import (ElectraConfig, ElectraForMaskedLM, ElectraForPreTraining,
                          ElectraForQuestionAnswering, ElectraForSequenceClassification,
                          ElectraForTokenClassification, RobertaConfig, RobertaForMaskedLM,
                          RobertaForQuestionAnswering, RobertaForSequenceClassification,
                          RobertaForTokenClassification, XLMRobertaConfig,
                          XLMRobertaForSequenceClassification)

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from make_bert_fixtures import BATCH, LENGTHS, ROOT, SEQ, save_expected  # noqa: E402

QA = (RobertaForQuestionAnswering, ElectraForQuestionAnswering)
TOKEN = (RobertaForTokenClassification, ElectraForTokenClassification)
SEQUENCE = (RobertaForSequenceClassification, XLMRobertaForSequenceClassification,
            ElectraForSequenceClassification)

# (family folder, name): (model class, config class, config sizes, seed)
FIXTURES = {
    ("roberta", "classifier"): (RobertaForSequenceClassification, RobertaConfig,
                                dict(hidden_size=30, num_hidden_layers=2, num_attention_heads=5,
                                     intermediate_size=41, num_labels=3), 4000),
    ("roberta", "qa"): (RobertaForQuestionAnswering, RobertaConfig,
                        dict(hidden_size=24, num_hidden_layers=2, num_attention_heads=4,
                             intermediate_size=31), 4001),
    ("roberta", "token"): (RobertaForTokenClassification, RobertaConfig,
                           dict(hidden_size=18, num_hidden_layers=3, num_attention_heads=3,
                                intermediate_size=23, num_labels=5, layer_norm_eps=1e-5), 4002),
    # gelu_new as hidden_act: the encoder uses it, lm_head's gelu stays erf.
    ("roberta", "mlm"): (RobertaForMaskedLM, RobertaConfig,
                         dict(hidden_size=20, num_hidden_layers=2, num_attention_heads=4,
                              intermediate_size=27, hidden_act="gelu_new"), 4003),
    # Multi-label BCE chosen by problem_type, with XLM-RoBERTa's model type and class names.
    ("xlm_roberta", "classifier"): (XLMRobertaForSequenceClassification, XLMRobertaConfig,
                                    dict(hidden_size=21, num_hidden_layers=2,
                                         num_attention_heads=3, intermediate_size=29,
                                         num_labels=4,
                                         problem_type="multi_label_classification"), 4004),
    # gelu_new as hidden_act: the encoder uses it, the classification head's gelu stays erf.
    ("electra", "classifier"): (ElectraForSequenceClassification, ElectraConfig,
                                dict(embedding_size=14, hidden_size=24, num_hidden_layers=2,
                                     num_attention_heads=4, intermediate_size=37, num_labels=3,
                                     hidden_act="gelu_new"), 4100),
    # embedding_size == hidden_size: no embeddings_project.
    ("electra", "qa"): (ElectraForQuestionAnswering, ElectraConfig,
                        dict(embedding_size=18, hidden_size=18, num_hidden_layers=2,
                             num_attention_heads=3, intermediate_size=25), 4101),
    ("electra", "token"): (ElectraForTokenClassification, ElectraConfig,
                           dict(embedding_size=11, hidden_size=20, num_hidden_layers=2,
                                num_attention_heads=5, intermediate_size=23, num_labels=5),
                           4102),
    # The generator; relu as hidden_act: the encoder uses it, generator_predictions' gelu stays.
    ("electra", "mlm"): (ElectraForMaskedLM, ElectraConfig,
                         dict(embedding_size=10, hidden_size=22, num_hidden_layers=2,
                              num_attention_heads=2, intermediate_size=29, hidden_act="relu"),
                         4103),
    # The discriminator; gelu_new as hidden_act, which its prediction head uses too.
    ("electra", "pretraining"): (ElectraForPreTraining, ElectraConfig,
                                 dict(embedding_size=13, hidden_size=16, num_hidden_layers=2,
                                      num_attention_heads=4, intermediate_size=19,
                                      hidden_act="gelu_new"), 4104),
}


def make_config(config_class, spec):
    if config_class is ElectraConfig:
        base = dict(vocab_size=97, max_position_embeddings=40, type_vocab_size=2, pad_token_id=0)
    else:
        base = dict(vocab_size=89, max_position_embeddings=40, type_vocab_size=1, pad_token_id=1,
                    bos_token_id=0, eos_token_id=2)
    return config_class(hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1,
                        attn_implementation="eager", **base, **spec)


def randomize(model, generator):
    """Wider weights than HF's init; the embeddings' padding rows (nn.Embedding's padding_idx:
    the word embeddings', and RoBERTa's position embeddings') stay zero."""
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
        for module in model.modules():
            if isinstance(module, torch.nn.Embedding) and module.padding_idx is not None:
                module.weight[module.padding_idx].zero_()


def make_inputs(config, generator):
    """Right-padded rows of LENGTHS real tokens; the padding id only in the padding."""
    pad = config.pad_token_id
    input_ids = torch.randint(pad + 1, config.vocab_size, (BATCH, SEQ), generator=generator)
    attention_mask = torch.zeros(BATCH, SEQ, dtype=torch.long)
    token_type_ids = torch.zeros(BATCH, SEQ, dtype=torch.long)
    for row, length in enumerate(LENGTHS):
        attention_mask[row, :length] = 1
        input_ids[row, length:] = pad
        if config.type_vocab_size > 1:
            token_type_ids[row, length // 2:length] = 1  # a second segment
    input_ids[:, 0] = 0 if config.model_type != "electra" else 2  # <s> or a [CLS]-like token
    return dict(input_ids=input_ids, token_type_ids=token_type_ids, attention_mask=attention_mask)


def labels_for(model, config, batch, generator):
    if isinstance(model, QA):
        # Row 1's start lies past the sequence (clamped to SEQ, ignored); row 2's end is -3
        # (clamped to 0, a real label).
        return dict(start_positions=torch.tensor([2, SEQ + 2, 1]),
                    end_positions=torch.tensor([4, 3, -3]))
    if isinstance(model, SEQUENCE):
        if config.problem_type == "multi_label_classification":
            shape = (BATCH, config.num_labels)
            return dict(labels=torch.randint(0, 2, shape, generator=generator).float())
        return dict(labels=torch.randint(0, config.num_labels, (BATCH,), generator=generator))
    if isinstance(model, ElectraForPreTraining):
        # 1 = replaced, 0 = original; padding tokens say 1, which the loss must not count.
        labels = torch.randint(0, 2, (BATCH, SEQ), generator=generator)
        return dict(labels=torch.where(batch["attention_mask"] == 1, labels, 1))
    # Token classification labels every real token but one; masked LM every other real token.
    # Padding positions are -100, as the collators write them.
    token = isinstance(model, TOKEN)
    classes = config.num_labels if token else config.vocab_size
    labels = torch.full((BATCH, SEQ), -100, dtype=torch.long)
    for row, length in enumerate(LENGTHS):
        for position in range(row % 2, length, 1 if token else 2):
            labels[row, position] = int(torch.randint(0, classes, (1,), generator=generator))
    labels[0, 3] = -100
    return dict(labels=labels)


def make_fixture(family, name, model_class, config_class, spec, seed):
    generator = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    config = make_config(config_class, spec)
    model = model_class(config)
    randomize(model, generator)
    model.eval()
    folder = ROOT / "tests/data" / family / name
    folder.mkdir(parents=True, exist_ok=True)
    # Saved before the forward pass, which writes an inferred problem_type into the config.
    model.save_pretrained(folder, safe_serialization=True)
    batch = make_inputs(config, generator)
    batch.update(labels_for(model, config, batch, generator))
    save_expected(model, batch, folder)


def main():
    for (family, name), (model_class, config_class, spec, seed) in FIXTURES.items():
        make_fixture(family, name, model_class, config_class, spec, seed)


if __name__ == "__main__":
    main()
