#!/usr/bin/env python3
"""Golden fixtures for Kiln's BERT heads beyond sequence classification: tiny random
BertForQuestionAnswering (tests/data/bert/qa/), BertForMaskedLM (tests/data/bert/mlm/) and
BertForTokenClassification (tests/data/bert/token/) models saved by transformers, and in
expected.safetensors a batch with the logits, the loss and every parameter's gradient. Same models, batch and conventions as make_bert_fixtures.py (whose
helpers this imports): wider random weights, eval mode, eager attention.

The QA batch has one start position past the sequence and one negative end position, so the
clamping of HF's loss shows; the masked-LM labels are -100 except at a few real tokens; the
token-classification labels are -100 only at padding and one real token. The masked-LM decoder
is tied to the word embeddings, so the embeddings' gradient has both parts.

Usage: python3 tests/fixtures_gen/make_bert_head_fixtures.py (pip: torch transformers safetensors)
"""
import sys

import torch
from transformers import BertForMaskedLM, BertForQuestionAnswering, BertForTokenClassification

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from make_bert_fixtures import (BATCH, LENGTHS, OUT, SEQ, make_config, randomize,  # noqa: E402
                                save_expected)

SPEC = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=37)


def inputs(config, generator):
    input_ids = torch.randint(1, config.vocab_size, (BATCH, SEQ), generator=generator)
    attention_mask = torch.zeros(BATCH, SEQ, dtype=torch.long)
    token_type_ids = torch.zeros(BATCH, SEQ, dtype=torch.long)
    for row, length in enumerate(LENGTHS):
        attention_mask[row, :length] = 1
        input_ids[row, length:] = config.pad_token_id
        token_type_ids[row, length // 2:length] = 1
    input_ids[:, 0] = 2
    return dict(input_ids=input_ids, token_type_ids=token_type_ids, attention_mask=attention_mask)


def make(name, model_class, labels_for, seed, **spec):
    generator = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    config = make_config(dict(SPEC, **spec))
    model = model_class(config)
    randomize(model, generator)
    model.eval()
    folder = OUT / name
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder, safe_serialization=True)
    batch = inputs(config, generator)
    batch.update(labels_for(config, batch, generator))
    save_expected(model, batch, folder)


def qa_labels(config, batch, generator):
    # Row 0: inside; row 1: start past the sequence (clamped to SEQ, ignored), row 2: end -3
    # (clamped to 0, a real label).
    return dict(start_positions=torch.tensor([2, SEQ + 2, 1]), end_positions=torch.tensor([4, 3, -3]))


def mlm_labels(config, batch, generator):
    labels = torch.full((BATCH, SEQ), -100, dtype=torch.long)
    for row, length in enumerate(LENGTHS):
        for position in range(1, length, 2):
            labels[row, position] = int(torch.randint(1, config.vocab_size, (1,), generator=generator))
    return dict(labels=labels)


def token_labels(config, batch, generator):
    labels = torch.full((BATCH, SEQ), -100, dtype=torch.long)
    for row, length in enumerate(LENGTHS):
        labels[row, :length] = torch.randint(0, config.num_labels, (length,), generator=generator)
    labels[0, 3] = -100
    return dict(labels=labels)


def main():
    make("qa", BertForQuestionAnswering, qa_labels, 2000)
    make("mlm", BertForMaskedLM, mlm_labels, 2001, hidden_act="gelu_new")
    make("token", BertForTokenClassification, token_labels, 2002, num_labels=5,
         classifier_dropout=0.2)


if __name__ == "__main__":
    main()
