#!/usr/bin/env python3
"""The losses of train_attention_test's network trained in PyTorch: the same graph, initial
weights, batch and dropout masks (Kiln's Philox-4x32-10 streams, reimplemented here from
src/kiln/ir/philox.cpp, src/kiln/nn/init.cpp and the dropout decomposition in
src/kiln/ir/ops_composite_decompose.cpp), torch.optim.AdamW(lr 0.01, weight decay 0.01 on the
matrices and embeddings only), 120 steps in float32.

  PYTHONPATH=/work/main/build/pjrt-plugin python3 tests/fixtures_gen/make_attention_loss_fixture.py
writes tests/fixtures/train_attention_losses.json.
"""
import json
import math
import os

import numpy as np
import torch

BATCH, SEQ, VOCAB, DIM, STEPS = 48, 6, 8, 8, 120
M = np.uint64(0xFFFFFFFF)


def philox(counter, key):
    """Philox-4x32-10 on arrays of uint64 words (each < 2^32)."""
    c = [np.asarray(w, dtype=np.uint64) for w in counter]
    k0, k1 = np.uint64(key[0]), np.uint64(key[1])
    for round_ in range(10):
        if round_ > 0:
            k0, k1 = (k0 + np.uint64(0x9E3779B9)) & M, (k1 + np.uint64(0xBB67AE85)) & M
        p0 = np.uint64(0xD2511F53) * c[0]
        p1 = np.uint64(0xCD9E8D57) * c[2]
        c = [(p1 >> np.uint64(32)) ^ c[1] ^ k0, p1 & M, (p0 >> np.uint64(32)) ^ c[3] ^ k1, p0 & M]
    return c


def random_bits_at(seed, offset, stream, index):
    index = np.asarray(index, dtype=np.int64)
    offset = np.broadcast_to(np.asarray(offset, dtype=np.uint64), index.shape)
    words = philox([(index // 4).astype(np.uint64), np.full(index.shape, stream, np.uint64),
                    offset & M, offset >> np.uint64(32)], (seed & 0xFFFFFFFF, seed >> 32))
    return np.choose(index % 4, words)


def init_normal(shape, stddev, seed, stream):
    n = int(np.prod(shape))
    uniform = lambda i: ((random_bits_at(seed, 0, stream, i) >> np.uint64(8)) + 0.5) * 2.0 ** -24
    i = np.arange(n)
    radius = np.sqrt(-2.0 * np.log(uniform(2 * i)))
    values = stddev * radius * np.cos(2.0 * math.pi * uniform(2 * i + 1))
    return torch.tensor(values.reshape(shape), dtype=torch.float32)


def dropout_mask(seed, step, shape, rate):
    """Kiln's dropout keep mask times 1/(1-rate): row b keyed by dropout_row_keys' step*B + b."""
    rows, row_length = shape[0], int(np.prod(shape[1:]))
    offsets = step * rows + np.arange(rows)[:, None]
    bits = random_bits_at(seed, offsets, 0, np.broadcast_to(np.arange(row_length), (rows, row_length)))
    threshold = min(math.floor(rate * 2.0 ** 32), 2 ** 32 - 1)
    keep = torch.tensor((bits >= threshold).reshape(shape))
    return keep.float() * torch.tensor(1.0 / (1.0 - rate), dtype=torch.float32)


def make_batch():
    tokens = np.zeros((BATCH, SEQ), np.int64)
    mask = np.zeros((BATCH, 1, 1, SEQ), np.float32)
    labels = np.zeros(BATCH, np.int64)
    for b in range(BATCH):
        length = 4 + int(random_bits_at(7, 0, 0, b)) % 3
        for s in range(SEQ):
            tokens[b, s] = 1 + int(random_bits_at(7, 0, 1, b * SEQ + s)) % 3 if s < length else 0
            mask[b, 0, 0, s] = 0.0 if s < length else -1e9
        labels[b] = int(tokens[b, 0] == tokens[b, length - 1])
    return torch.tensor(tokens), torch.tensor(mask), torch.tensor(labels)


def main():
    specs = [("embeddings.word", (VOCAB, DIM), True), ("embeddings.position", (SEQ, DIM), True),
             ("attention.query", (DIM, DIM), True), ("attention.key", (DIM, DIM), True),
             ("attention.value", (DIM, DIM), True), ("norm.weight", (DIM,), False),
             ("norm.bias", (DIM,), False), ("ffn.weight", (DIM, DIM), True),
             ("ffn.bias", (DIM,), False), ("classifier.weight", (DIM, 2), True),
             ("classifier.bias", (2,), False)]
    p = {}
    for i, (name, shape, _) in enumerate(specs):
        value = torch.ones(shape) if name == "norm.weight" else init_normal(shape, 0.1, 1, i)
        p[name] = value.requires_grad_()
    optimizer = torch.optim.AdamW(
        [{"params": [p[n] for n, _, d in specs if d], "weight_decay": 0.01},
         {"params": [p[n] for n, _, d in specs if not d], "weight_decay": 0.0}], lr=0.01)
    tokens, mask, labels = make_batch()
    losses = []
    for step in range(STEPS):
        hidden = p["embeddings.word"][tokens] + p["embeddings.position"]
        heads = lambda w: (hidden @ w).reshape(BATCH, 1, SEQ, DIM)
        scores = heads(p["attention.query"]) @ heads(p["attention.key"]).transpose(-1, -2)
        probs = torch.softmax(scores / math.sqrt(DIM) + mask, dim=-1)
        context = (probs @ heads(p["attention.value"])).reshape(BATCH, SEQ, DIM)
        context = context * dropout_mask(1234, step, (BATCH, SEQ, DIM), 0.1)
        hidden = torch.nn.functional.layer_norm(hidden + context, (DIM,), p["norm.weight"],
                                                p["norm.bias"], 1e-5)
        hidden = hidden + torch.nn.functional.gelu(hidden @ p["ffn.weight"] + p["ffn.bias"])
        logits = hidden.mean(1) @ p["classifier.weight"] + p["classifier.bias"]
        loss = torch.nn.functional.cross_entropy(logits, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    out = os.path.join(os.path.dirname(__file__), "..", "fixtures", "train_attention_losses.json")
    with open(out, "w") as f:
        json.dump({"generator": "tests/fixtures_gen/make_attention_loss_fixture.py",
                   "torch": torch.__version__, "losses": losses}, f, indent=1)
        f.write("\n")
    print(f"first {losses[0]:.9f} final {losses[-1]:.9f} -> {out}")


if __name__ == "__main__":
    main()
