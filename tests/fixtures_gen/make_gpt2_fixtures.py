#!/usr/bin/env python3
"""Golden fixtures for Kiln's GPT-2: tiny random GPT2LMHeadModel, GPT2ForSequenceClassification
(single-label and regression), GPT2ForTokenClassification and GPT2ForQuestionAnswering models
saved by `transformers` into tests/data/gpt2/<name>/ (config.json, model.safetensors), and in
expected.safetensors a right-padded batch (as Kiln collates) with the logits, the loss and every
parameter's gradient. Odd sizes (heads of 5 and 6 features, n_inner 37), fp32, eval mode, eager
attention; weights re-drawn wider than GPT-2's initializer so that every path carries a signal.

Also:
  lm/generate.safetensors: greedy `generate(do_sample=False)` of the LM on two prompts (ids,
    generated tokens and the logits of every step), for the key/value-cache decoding test.
  lm_sharded/: the LM saved by save_pretrained with a small max_shard_size
    (model.safetensors.index.json and its shards).
  cli/: an LM over the byte-level BPE tokenizer of tests/fixtures/tokenizer_bpe/gpt2, and in
    expected.json a prompt with the text of its greedy generate() continuation (cli_generate_test).
  warpers.safetensors: generate()'s sampling warpers (temperature, top-k, top-p, in its order)
    on random logits with ties, in several settings, for generation_sampling_test.

Usage (PyPI packages; CI does not need them):
  pip install torch transformers safetensors
  python3 tests/fixtures_gen/make_gpt2_fixtures.py
"""
import json
import pathlib

import torch
import transformers
from safetensors.torch import save_file
from transformers import (GPT2Config, GPT2ForQuestionAnswering, GPT2ForSequenceClassification,
                          GPT2ForTokenClassification, GPT2LMHeadModel, PreTrainedTokenizerFast)
from transformers.generation.logits_process import (LogitsProcessorList, TemperatureLogitsWarper,
                                                    TopKLogitsWarper, TopPLogitsWarper)

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "tests/data/gpt2"

BATCH, SEQ = 3, 7
LENGTHS = [7, 5, 3]  # real tokens per row; the rest is padding (attention_mask 0)
VOCAB = 97
EOS = VOCAB - 1  # GPT-2's <|endoftext|> is its last id; run_glue/run_ner pad with it

SPECS = {
    "lm": (GPT2LMHeadModel, dict(n_embd=20, n_head=4, n_layer=2, n_inner=37)),
    "classifier": (GPT2ForSequenceClassification,
                   dict(n_embd=30, n_head=5, n_layer=2, n_inner=41, num_labels=3,
                        pad_token_id=EOS)),
    # n_inner null: 4 * n_embd. One label: MSE on float labels.
    "regression": (GPT2ForSequenceClassification,
                   dict(n_embd=18, n_head=3, n_layer=1, num_labels=1, pad_token_id=EOS,
                        layer_norm_epsilon=1e-4)),
    "token": (GPT2ForTokenClassification,
              dict(n_embd=20, n_head=4, n_layer=2, n_inner=37, num_labels=5, pad_token_id=EOS)),
    "qa": (GPT2ForQuestionAnswering, dict(n_embd=20, n_head=4, n_layer=2, n_inner=37)),
}


def make_config(spec):
    return GPT2Config(vocab_size=VOCAB, n_positions=24, bos_token_id=EOS, eos_token_id=EOS,
                      attn_implementation="eager", **spec)


def randomize(model, generator):
    with torch.no_grad():
        for name, param in model.named_parameters():
            noise = torch.randn(param.shape, generator=generator)
            if ".ln_" in name and name.endswith("weight"):
                param.copy_(1.0 + 0.2 * noise)
            elif name.endswith("bias") or ".ln_" in name:
                param.copy_(0.1 * noise)
            else:
                param.copy_(0.3 * noise)


def make_batch(config, generator):
    input_ids = torch.randint(0, EOS, (BATCH, SEQ), generator=generator)
    attention_mask = torch.zeros(BATCH, SEQ, dtype=torch.long)
    for row, length in enumerate(LENGTHS):
        attention_mask[row, :length] = 1
        input_ids[row, length:] = EOS
    return dict(input_ids=input_ids, attention_mask=attention_mask)


def labels_for(name, config, batch, generator):
    mask = batch["attention_mask"].bool()
    if name == "lm":  # labels = input_ids, padding ignored (shifted inside the model)
        return dict(labels=batch["input_ids"].masked_fill(~mask, -100))
    if name == "classifier":
        return dict(labels=torch.randint(0, config.num_labels, (BATCH,), generator=generator))
    if name == "regression":
        return dict(labels=torch.randn(BATCH, generator=generator))
    if name == "token":  # a word's later sub-tokens and the padding are -100
        labels = torch.randint(0, config.num_labels, (BATCH, SEQ), generator=generator)
        labels[:, 2] = -100
        return dict(labels=labels.masked_fill(~mask, -100))
    # QA: row 1's start lies past the sequence (clamped to SEQ, ignored), row 2's end is
    # negative (clamped to 0, a real label).
    return dict(start_positions=torch.tensor([2, SEQ + 2, 1]),
                end_positions=torch.tensor([4, 3, -3]))


def make_fixture(name, seed):
    model_class, spec = SPECS[name]
    generator = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    config = make_config(spec)
    model = model_class(config)
    randomize(model, generator)
    model.eval()
    folder = OUT / name
    folder.mkdir(parents=True, exist_ok=True)
    # Saved before the forward pass, which writes an inferred problem_type into the config.
    model.save_pretrained(folder)
    batch = make_batch(config, generator)
    batch.update(labels_for(name, config, batch, generator))
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
    print(f"{name} (torch {torch.__version__}, transformers {transformers.__version__}): "
          f"loss {out.loss.item():.6f}")
    return model


def make_generation(model):
    """Greedy continuations of two prompts, one row each (no padding), with every step's logits."""
    generator = torch.Generator().manual_seed(7)
    expected = {}
    for index, length in enumerate([4, 1]):
        prompt = torch.randint(0, EOS, (1, length), generator=generator)
        with torch.no_grad():
            out = model.generate(prompt, attention_mask=torch.ones_like(prompt), do_sample=False,
                                 max_new_tokens=9, output_logits=True,
                                 return_dict_in_generate=True, pad_token_id=EOS)
        new_tokens = out.sequences[:, length:]
        expected[f"prompt.{index}"] = prompt.contiguous()
        expected[f"tokens.{index}"] = new_tokens.contiguous()
        expected[f"logits.{index}"] = torch.stack(out.logits, dim=1).contiguous()  # [1, new, vocab]
        print(f"generate {index}: prompt {prompt.tolist()} -> {new_tokens.tolist()}")
    save_file(expected, OUT / "lm" / "generate.safetensors")


WARPER_CASES = {  # name: (temperature, top_k, top_p); 1.0 / 0 / 1.0 leave a warper out
    "temperature": (0.7, 0, 1.0),
    "top_k": (1.0, 5, 1.0),
    "top_p": (1.0, 0, 0.9),
    "all": (0.8, 10, 0.85),
    "greedy_k": (1.0, 1, 1.0),
    "tiny_p": (1.3, 0, 0.01),
}


def make_warper_cases():
    generator = torch.Generator().manual_seed(11)
    logits = torch.randn(4, VOCAB, generator=generator) * 3
    logits[1, 10:20] = logits[1, 5]  # ties at the top-k threshold
    expected = {"logits": logits}
    for name, (temperature, top_k, top_p) in WARPER_CASES.items():
        warpers = LogitsProcessorList()
        if temperature != 1.0:
            warpers.append(TemperatureLogitsWarper(temperature))
        if top_k != 0:
            warpers.append(TopKLogitsWarper(top_k))
        if top_p < 1.0:
            warpers.append(TopPLogitsWarper(top_p))
        expected[name] = warpers(None, logits.clone()).contiguous()
        settings = [temperature, top_k, top_p]
        expected[name + ".settings"] = torch.tensor(settings, dtype=torch.float64)
    save_file(expected, OUT / "warpers.safetensors")


def make_cli_fixture():
    tokenizer_dir = ROOT / "tests/fixtures/tokenizer_bpe/gpt2"
    tokenizer = PreTrainedTokenizerFast.from_pretrained(tokenizer_dir)
    generator = torch.Generator().manual_seed(9)
    torch.manual_seed(9)
    config = GPT2Config(vocab_size=len(tokenizer), n_positions=64, n_embd=16, n_head=4, n_layer=2,
                        bos_token_id=tokenizer.eos_token_id, eos_token_id=tokenizer.eos_token_id,
                        attn_implementation="eager")
    model = GPT2LMHeadModel(config)
    randomize(model, generator)
    model.eval()
    folder = OUT / "cli"
    model.save_pretrained(folder)
    prompt = "It is a truth universally acknowledged"
    ids = tokenizer(prompt, return_tensors="pt")
    with torch.no_grad():
        out = model.generate(**ids, do_sample=False, max_new_tokens=12,
                             pad_token_id=tokenizer.eos_token_id)
    new_ids = out[0, ids["input_ids"].shape[1]:].tolist()
    expected = dict(prompt=prompt, max_new_tokens=12, ids=new_ids,
                    continuation=tokenizer.decode(new_ids, skip_special_tokens=True))
    (folder / "expected.json").write_text(json.dumps(expected, indent=2) + "\n")
    print("cli:", expected)


def main():
    models = {name: make_fixture(name, 3000 + seed) for seed, name in enumerate(SPECS)}
    make_generation(models["lm"])
    models["lm"].save_pretrained(OUT / "lm_sharded", max_shard_size="16KB")
    print("lm_sharded:", sorted(path.name for path in (OUT / "lm_sharded").iterdir()))
    make_warper_cases()
    make_cli_fixture()


if __name__ == "__main__":
    main()
