#!/usr/bin/env python3
"""Kiln's BERT training step through XLA:GPU (a PJRT plugin) beside PyTorch on the same GPU.

For each BERT preset, runs `kiln bench` (forward, backward and AdamW of
BertForSequenceClassification, compiled by Kiln and lowered to StableHLO for the plugin, with the
weights and optimizer state resident on the device) and the same step in PyTorch (transformers'
BertForSequenceClassification, torch.optim.AdamW, no clipping on either side, as bert_torch.py),
after the same number of warm-up steps, and prints tokens/s side by side, plus one JSON line per
run.

Needs, on a machine with an NVIDIA GPU: Kiln built (build/kiln), the XLA GPU plugin
(pip install jax-cuda13-pjrt, found as `kiln devices` finds it, or --pjrt-plugin PATH), and
torch + transformers with CUDA. Everything but the GPU runs on a CPU too, which is how it is
tested: --device pjrt:cpu --torch-device cpu with the xla-cpu-pjrt plugin.

  python3 scripts/xla_gpu_bench.py --configs tiny,mini,base --batch 32 --seq 128
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

PRESETS = {"tiny": (2, 128, 2, 512), "mini": (4, 256, 4, 1024), "small": (4, 512, 8, 2048),
           "medium": (8, 512, 8, 2048), "base": (12, 768, 12, 3072)}


def kiln_step(args, config):
    command = [args.kiln, "bench", "--config", config, "--batch", str(args.batch),
               "--seq", str(args.seq), "--steps", str(args.steps), "--warmup", str(args.warmup),
               "--device", args.device]
    if args.pjrt_plugin:
        command += ["--pjrt_plugin", args.pjrt_plugin]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        return {"runner": "kiln", "config": config, "error": result.stderr.strip()}
    return json.loads(result.stdout.strip().splitlines()[-1])


def torch_step(args, config):
    try:
        import torch
        from transformers import BertConfig, BertForSequenceClassification
    except ImportError as error:
        return {"runner": "torch", "config": config, "error": f"not installed: {error}"}
    layers, hidden, heads, intermediate = PRESETS[config]
    device = torch.device(args.torch_device)
    torch.manual_seed(0)
    model = BertForSequenceClassification(BertConfig(
        num_hidden_layers=layers, hidden_size=hidden, num_attention_heads=heads,
        intermediate_size=intermediate, num_labels=2, attn_implementation="eager")).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5, weight_decay=0.01)
    ids = torch.randint(0, model.config.vocab_size, (args.batch, args.seq), device=device)
    labels = torch.randint(0, 2, (args.batch,), device=device)

    def step():
        loss = model(input_ids=ids, labels=labels).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        if device.type == "cuda":
            torch.cuda.synchronize()

    model.train()
    for _ in range(args.warmup):
        step()
    times = []
    for _ in range(args.steps):
        begin = time.perf_counter()
        step()
        times.append(time.perf_counter() - begin)
    median = statistics.median(times)
    return {"runner": "torch", "backend": f"torch:{device.type}", "config": config,
            "batch": args.batch, "seq": args.seq, "steps": args.steps,
            "step_ms": round(median * 1e3, 3), "tokens_per_s": round(args.batch * args.seq / median, 1)}


def table(rows):
    lines = [f"{'config':<8} {'kiln ' + rows[0][0].get('device', '?'):>22} {'torch':>14} {'ratio':>7}"]
    for kiln, torch_result in rows:
        k, t = kiln.get("tokens_per_s"), torch_result.get("tokens_per_s")
        ratio = f"{k / t:.2f}" if k and t else "n/a"
        lines.append(f"{kiln['config']:<8} {k or 'error':>22} {t or 'n/a':>14} {ratio:>7}")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--configs", default="tiny,mini,base")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=3, help="untimed steps first, both sides")
    parser.add_argument("--device", default="pjrt:cuda", help="Kiln's device (pjrt:cpu to test)")
    parser.add_argument("--torch-device", default="cuda")
    parser.add_argument("--pjrt-plugin", default="", help="the plugin library (default: found)")
    parser.add_argument("--kiln", default=os.path.join(os.path.dirname(__file__), "..", "build",
                                                       "kiln"))
    args = parser.parse_args()
    rows = []
    for config in args.configs.split(","):
        kiln, torch_result = kiln_step(args, config), torch_step(args, config)
        for result in (kiln, torch_result):
            print(json.dumps(result), flush=True)
        rows.append((kiln, torch_result))
    print(table(rows))
    return 0 if all("error" not in kiln for kiln, _ in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
