#!/usr/bin/env python3
"""Reference numbers of run_clm.py's recipe on a tiny GPT-2, for tests/cli_clm_test.cpp.

Writes tests/data/clm/tiny_gpt2/ (config.json, model.safetensors: a random GPT2LMHeadModel,
2 layers, n_embd 32, 4 heads, 128 positions, every dropout 0, seed 42, the vocabulary of
data/tokenizers/austen-bpe-1k) and tests/data/clm/hf_clm_reference.json: what transformers'
Trainer computes on it with run_clm.py's data pipeline and metrics:
  data   data/lm/persuasion.txt read as `datasets`' text loader reads it with run_clm.py's
         keep_linebreaks (Python's text mode, StringIO.readlines: each line keeps its "\n"),
         validation = the first 5% of the lines (`train[:5%]`: round(n * 5 / 100), Python's
         round), train = the rest; each line tokenized (GPT-2's tokenizer adds no special
         tokens), concatenated per map batch of 1,000 lines and cut into blocks of 32 tokens,
         the remainder of each batch dropped (group_texts); labels = input_ids; the first 320
         train blocks and the first 20 validation blocks (max_train_samples, max_eval_samples).
  train  40 steps of batch 8 in file order (train_sampling_strategy "sequential", as Kiln's
         --train_sampling_strategy sequential), AdamW (torch), lr 1e-2, weight_decay 0.01,
         linear schedule with 5 warmup steps, max_grad_norm 1, logging_steps 1, seed 42.
  eval   before and after training, batch 8 (the last batch has 4 blocks): eval_loss,
         perplexity = exp(eval_loss), eval_accuracy = run_clm.py's compute_metrics on its
         preprocess_logits_for_metrics (argmax of logits[:, :-1] against labels[:, 1:]).
Kiln runs the same from the committed files with `kiln train --task clm` and `kiln evaluate`.

Usage (PyPI torch and transformers; CI only reads the output):
  python3 tests/fixtures_gen/make_clm_fixtures.py
"""
import io
import json
import math
import pathlib
import tempfile

import numpy as np
import torch
import transformers
from transformers import (AutoTokenizer, GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments,
                          default_data_collator)

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "tests/data/clm"
MODEL = OUT / "tiny_gpt2"
TOKENIZER = ROOT / "data/tokenizers/austen-bpe-1k"
TEXT = ROOT / "data/lm/persuasion.txt"
VALIDATION_PERCENT = 5
BLOCK = 32
GROUP = 1000
MAX_TRAIN, MAX_EVAL = 320, 20
ARGS = dict(per_device_train_batch_size=8, per_device_eval_batch_size=8, learning_rate=1e-2,
            weight_decay=0.01, warmup_steps=5, lr_scheduler_type="linear", max_grad_norm=1.0,
            max_steps=40, logging_steps=1, seed=42, optim="adamw_torch",
            train_sampling_strategy="sequential")


def text_lines():
    """`datasets`' text loader with keep_linebreaks=True."""
    with open(TEXT, encoding="utf-8") as f:
        return io.StringIO(f.read()).readlines()


def blocks(tokenizer, lines, limit):
    out = []
    for first in range(0, len(lines), GROUP):
        ids = [i for line in lines[first:first + GROUP] for i in tokenizer(line)["input_ids"]]
        total = len(ids) // BLOCK * BLOCK
        out += [ids[i:i + BLOCK] for i in range(0, total, BLOCK)]
    return [{"input_ids": b, "attention_mask": [1] * BLOCK, "labels": list(b)}
            for b in out[:limit]]


def preprocess_logits_for_metrics(logits, labels):
    return logits.argmax(dim=-1)


def compute_metrics(eval_preds):
    preds, labels = eval_preds
    labels = labels[:, 1:].reshape(-1)
    preds = preds[:, :-1].reshape(-1)
    return {"accuracy": float((preds == labels).mean())}


def evaluation(trainer):
    metrics = trainer.evaluate()
    return {"eval_loss": metrics["eval_loss"], "perplexity": math.exp(metrics["eval_loss"]),
            "eval_accuracy": metrics["eval_accuracy"]}


def main():
    tokenizer = AutoTokenizer.from_pretrained(TOKENIZER)
    lines = text_lines()
    held_out = int(round(len(lines) * VALIDATION_PERCENT / 100))
    train = blocks(tokenizer, lines[held_out:], MAX_TRAIN)
    validation = blocks(tokenizer, lines[:held_out], MAX_EVAL)

    transformers.set_seed(42)
    config = GPT2Config(vocab_size=len(tokenizer), n_positions=128, n_embd=32, n_layer=2,
                        n_head=4, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                        bos_token_id=tokenizer.eos_token_id, eos_token_id=tokenizer.eos_token_id)
    GPT2LMHeadModel(config).save_pretrained(MODEL, safe_serialization=True)
    model = GPT2LMHeadModel.from_pretrained(MODEL, attn_implementation="eager")
    # transformers 5's Trainer divides a batch's summed loss by its labels that are predicted
    # (labels[..., 1:]) only for models whose loss_type is ForCausalLM; GPT2LMHeadModel's is None
    # (its class name matches no loss), so the Trainer would divide by all batch * block labels.
    # Set, the training loss is the mean over the predicted tokens, as GPT2LMHeadModel's own
    # loss, transformers 4's Trainer and Kiln compute it.
    model.loss_type = "ForCausalLM"

    with tempfile.TemporaryDirectory() as tmp:
        args = TrainingArguments(output_dir=tmp, report_to="none", save_strategy="no",
                                 use_cpu=True, disable_tqdm=True, **ARGS)
        trainer = Trainer(model=model, args=args, train_dataset=train, eval_dataset=validation,
                          data_collator=default_data_collator, compute_metrics=compute_metrics,
                          preprocess_logits_for_metrics=preprocess_logits_for_metrics)
        before = evaluation(trainer)
        trainer.train()
        after = evaluation(trainer)
    logs = [entry for entry in trainer.state.log_history if "loss" in entry]
    assert [entry["step"] for entry in logs] == list(range(1, ARGS["max_steps"] + 1))
    result = {
        "what": "transformers' Trainer with run_clm.py's data and metrics on tests/data/clm/"
                "tiny_gpt2 (see the generator's docstring)",
        "generator": "tests/fixtures_gen/make_clm_fixtures.py",
        "versions": {"torch": torch.__version__, "transformers": transformers.__version__},
        "tokenizer": "data/tokenizers/austen-bpe-1k",
        "text": "data/lm/persuasion.txt",
        "lines": {"validation": held_out, "train": len(lines) - held_out},
        "block_size": BLOCK,
        "max_train_samples": MAX_TRAIN,
        "max_eval_samples": MAX_EVAL,
        "arguments": ARGS,
        "loss": [entry["loss"] for entry in logs],
        "grad_norm": [entry["grad_norm"] for entry in logs],
        "learning_rate": [entry["learning_rate"] for entry in logs],
        "eval_before_training": before,
        "eval_after_training": after,
    }
    (OUT / "hf_clm_reference.json").write_text(json.dumps(result, indent=2) + "\n")
    print("losses:", " ".join(f"{loss:.4f}" for loss in result["loss"]))
    print("before:", before, "\nafter:", after)


if __name__ == "__main__":
    main()
