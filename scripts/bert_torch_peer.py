#!/usr/bin/env python3
"""Self-contained PyTorch BERT encoder training-step benchmark (CPU): Kiln's copy of
../shared/bench/peer/bert_torch.py with run_mlm.py's step added.

What differs from the shared script (everything else, its math included, is the same):
  --task mlm  trains BertForMaskedLM as transformers 4.x builds it instead of the sequence
      classifier: the encoder without a pooler, then cls.predictions = transform (Linear(h,h),
      gelu_erf, LayerNorm eps 1e-12) and a decoder whose weight IS the word-embedding table
      (tied; counted once by model.parameters(), as in HF) plus its own zero-initialised bias,
      computed at every position as transformers does; loss = cross_entropy(logits over the
      vocabulary, labels, ignore_index=-100). The batch is masked by
      DataCollatorForLanguageModeling.torch_mask_tokens' rule: each token that is not special
      ([CLS] first, [SEP] last; no padding) is chosen with --mlm-probability (0.15), labels are
      -100 elsewhere, a chosen token becomes [MASK] (80%), a random id in [0, vocab) (10%) or
      stays (10%). Token type ids are all 0 (run_mlm.py's single-text blocks).
  "task" and "framework" fields in the JSON line.
The default (--task classification) runs exactly the shared script's step.

Same math as Hugging Face BertForSequenceClassification (transformers 4.x, "absolute"
position embeddings, eager attention):
  embeddings = LayerNorm(word[ids] + position[0..S) + token_type[tt]) (eps 1e-12) -> dropout 0.1
  L x post-LN layer:
      q,k,v = Linear(h,h); scores = q k^T / sqrt(d_head) + (1 - mask) * finfo(fp32).min
      probs = dropout(softmax(scores)); ctx = probs v
      a = LayerNorm(dropout(Linear(h,h)(ctx)) + x)
      y = LayerNorm(dropout(Linear(i,h)(gelu_erf(Linear(h,i)(a)))) + a)
  pooler = tanh(Linear(h,h)(y[:, 0])); logits = Linear(h, 2)(dropout(pooler))
  loss = cross_entropy(logits, labels)
Init as HF: normal(0, 0.02) weights, zero biases, LayerNorm (1, 0), padding_idx 0 row zeroed.

One training step = forward + loss + backward + torch.optim.AdamW(lr=2e-5).step() + zero_grad().
--dtype bf16 = torch.autocast('cpu', dtype=torch.bfloat16) around forward+loss
(fp32 master weights, fp32 optimizer state, backward outside autocast).
Prints ONE JSON line.
"""
import argparse
import json
import math
import os
import resource
import statistics
import sys
import time

CONFIGS = {  # layers, hidden, heads, intermediate
    "tiny": (2, 128, 2, 512),
    "mini": (4, 256, 4, 1024),
    "small": (4, 512, 8, 2048),
    "medium": (8, 512, 8, 2048),
    "base": (12, 768, 12, 3072),
    "large": (24, 1024, 16, 4096),
}
VOCAB = 30522
MAX_POS = 512
TYPE_VOCAB = 2
NUM_LABELS = 2
CLS_ID, SEP_ID, MASK_ID = 101, 102, 103  # bert-base-uncased's special tokens
LN_EPS = 1e-12
DROPOUT = 0.1


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--task", choices=["classification", "mlm"], default="classification",
                    help="BertForSequenceClassification (the shared script's step) or run_mlm.py's "
                         "BertForMaskedLM on a masked batch")
    ap.add_argument("--mlm-probability", type=float, default=0.15,
                    help="--task mlm: the share of tokens chosen for prediction")
    ap.add_argument("--config", choices=list(CONFIGS), default="base")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--steps", type=int, default=10, help="timed steps")
    ap.add_argument("--warmup", type=int, default=3, help="untimed steps before timing")
    ap.add_argument("--dtype", choices=["fp32", "bf16"], default="fp32")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--blas", choices=["system", "openblas-pthread", "openblas-openmp", "reference"],
                    default="system",
                    help="which Debian libblas.so.3 torch loads (re-exec with LD_LIBRARY_PATH); "
                         "system = the update-alternatives choice")
    ap.add_argument("--openblas-coretype", default="inherit",
                    help="inherit (leave OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE as in the environment), "
                         "unset (remove both: OpenBLAS autodetects), or a core name such as Haswell, "
                         "SkylakeX, Cooperlake (sets it and removes OPENBLAS_L2_SIZE)")
    ap.add_argument("--malloc", choices=["system", "tcmalloc", "jemalloc"], default="system",
                    help="LD_PRELOAD Debian's libtcmalloc-minimal4 / libjemalloc2 (re-exec); system = glibc")
    ap.add_argument("--profile", type=int, default=0,
                    help="after the JSON line, run this many extra steps under torch.profiler and print "
                         "the op table (self CPU time) to stderr")
    ap.add_argument("--compile", action="store_true",
                    help="torch.compile the model (PyTorch 2.x: Inductor's C++/OpenMP kernels); "
                         "compile time is spent in the warmup steps and reported as compile_s")
    ap.add_argument("--sdpa", action="store_true",
                    help="attention through F.scaled_dot_product_attention (PyTorch 2.x; what transformers "
                         "uses for BERT by default) instead of the eager matmul-softmax-dropout-matmul")
    ap.add_argument("--adamw", choices=["default", "foreach", "fused"], default="default",
                    help="torch.optim.AdamW implementation (fused needs PyTorch >= 2.4 on CPU)")
    ap.add_argument("--tag", default="", help="free text copied into the JSON line")
    return ap.parse_args()


def _reexec_for_blas(a):
    """OpenBLAS reads its env at load time and the BLAS is picked by the dynamic loader,
    so both are arranged before torch is imported by re-executing this script once."""
    if os.environ.get("BERT_TORCH_REEXEC") == "1":
        return
    env = dict(os.environ)
    changed = False
    if a.openblas_coretype != "inherit":
        changed = True
        env.pop("OPENBLAS_L2_SIZE", None)
        if a.openblas_coretype == "unset":
            env.pop("OPENBLAS_CORETYPE", None)
        else:
            env["OPENBLAS_CORETYPE"] = a.openblas_coretype
    if a.blas != "system":
        changed = True
        import sysconfig
        d = "/usr/lib/%s/%s" % (sysconfig.get_config_var("MULTIARCH") or "x86_64-linux-gnu",
                                {"reference": "blas"}.get(a.blas, a.blas))
        env["LD_LIBRARY_PATH"] = d + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    if a.malloc != "system":
        changed = True
        import sysconfig
        lib = {"tcmalloc": "libtcmalloc_minimal.so.4", "jemalloc": "libjemalloc.so.2"}[a.malloc]
        path = "/usr/lib/%s/%s" % (sysconfig.get_config_var("MULTIARCH") or "x86_64-linux-gnu", lib)
        if not os.path.exists(path):
            sys.exit("--malloc %s: %s not found (apt-get install libtcmalloc-minimal4 / libjemalloc2)"
                     % (a.malloc, path))
        env["LD_PRELOAD"] = path + (" " + env["LD_PRELOAD"] if env.get("LD_PRELOAD") else "")
    if changed:
        env["BERT_TORCH_REEXEC"] = "1"
        os.execve(sys.executable, [sys.executable] + sys.argv, env)


args = parse_args()
_reexec_for_blas(args)
# thread env must be set before torch / OpenBLAS / OpenMP are loaded
os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
os.environ.setdefault("OPENBLAS_NUM_THREADS", str(args.threads))

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402


class BertEmbeddings(nn.Module):
    def __init__(self, h):
        super().__init__()
        self.word_embeddings = nn.Embedding(VOCAB, h, padding_idx=0)
        self.position_embeddings = nn.Embedding(MAX_POS, h)
        self.token_type_embeddings = nn.Embedding(TYPE_VOCAB, h)
        self.LayerNorm = nn.LayerNorm(h, eps=LN_EPS)
        self.dropout = nn.Dropout(DROPOUT)
        self.register_buffer("position_ids", torch.arange(MAX_POS).expand((1, -1)), persistent=False)

    def forward(self, input_ids, token_type_ids):
        s = input_ids.shape[1]
        pos = self.position_ids[:, :s]
        e = self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids)
        e = e + self.position_embeddings(pos)
        return self.dropout(self.LayerNorm(e))


class BertSelfAttention(nn.Module):
    def __init__(self, h, nh):
        super().__init__()
        self.nh, self.dh = nh, h // nh
        self.query = nn.Linear(h, h)
        self.key = nn.Linear(h, h)
        self.value = nn.Linear(h, h)
        self.dropout = nn.Dropout(DROPOUT)

    def _split(self, x):
        b, s, _ = x.shape
        return x.view(b, s, self.nh, self.dh).permute(0, 2, 1, 3)

    def forward(self, x, ext_mask):
        q = self._split(self.query(x))
        k = self._split(self.key(x))
        v = self._split(self.value(x))
        if args.sdpa:
            ctx = F.scaled_dot_product_attention(q, k, v, attn_mask=ext_mask.to(q.dtype),
                                                 dropout_p=DROPOUT if self.training else 0.0)
            ctx = ctx.permute(0, 2, 1, 3).contiguous()
            return ctx.view(ctx.shape[0], ctx.shape[1], -1)
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.dh)
        scores = scores + ext_mask
        probs = self.dropout(F.softmax(scores, dim=-1))
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        return ctx.view(ctx.shape[0], ctx.shape[1], -1)


class BertSelfOutput(nn.Module):
    def __init__(self, h):
        super().__init__()
        self.dense = nn.Linear(h, h)
        self.LayerNorm = nn.LayerNorm(h, eps=LN_EPS)
        self.dropout = nn.Dropout(DROPOUT)

    def forward(self, x, inp):
        return self.LayerNorm(self.dropout(self.dense(x)) + inp)


class BertAttention(nn.Module):
    def __init__(self, h, nh):
        super().__init__()
        self.self = BertSelfAttention(h, nh)
        self.output = BertSelfOutput(h)

    def forward(self, x, ext_mask):
        return self.output(self.self(x, ext_mask), x)


class BertIntermediate(nn.Module):
    def __init__(self, h, i):
        super().__init__()
        self.dense = nn.Linear(h, i)

    def forward(self, x):
        return F.gelu(self.dense(x))  # exact erf GELU ("gelu" in HF ACT2FN)


class BertOutput(nn.Module):
    def __init__(self, h, i):
        super().__init__()
        self.dense = nn.Linear(i, h)
        self.LayerNorm = nn.LayerNorm(h, eps=LN_EPS)
        self.dropout = nn.Dropout(DROPOUT)

    def forward(self, x, inp):
        return self.LayerNorm(self.dropout(self.dense(x)) + inp)


class BertLayer(nn.Module):
    def __init__(self, h, nh, i):
        super().__init__()
        self.attention = BertAttention(h, nh)
        self.intermediate = BertIntermediate(h, i)
        self.output = BertOutput(h, i)

    def forward(self, x, ext_mask):
        a = self.attention(x, ext_mask)
        return self.output(self.intermediate(a), a)


class BertEncoder(nn.Module):
    def __init__(self, L, h, nh, i):
        super().__init__()
        self.layer = nn.ModuleList([BertLayer(h, nh, i) for _ in range(L)])

    def forward(self, x, ext_mask):
        for lyr in self.layer:
            x = lyr(x, ext_mask)
        return x


class BertPooler(nn.Module):
    def __init__(self, h):
        super().__init__()
        self.dense = nn.Linear(h, h)

    def forward(self, x):
        return torch.tanh(self.dense(x[:, 0]))


class BertModel(nn.Module):
    def __init__(self, L, h, nh, i, add_pooling_layer=True):
        super().__init__()
        self.embeddings = BertEmbeddings(h)
        self.encoder = BertEncoder(L, h, nh, i)
        self.pooler = BertPooler(h) if add_pooling_layer else None

    def forward(self, input_ids, token_type_ids, attention_mask):
        # HF get_extended_attention_mask: [B,1,1,S], (1 - mask) * finfo(param dtype).min
        ext = attention_mask[:, None, None, :].to(torch.float32)
        ext = (1.0 - ext) * torch.finfo(torch.float32).min
        x = self.embeddings(input_ids, token_type_ids)
        x = self.encoder(x, ext)
        return self.pooler(x) if self.pooler is not None else x


def init_weights(m):
    if isinstance(m, nn.Linear):
        m.weight.data.normal_(mean=0.0, std=0.02)
        if m.bias is not None:
            m.bias.data.zero_()
    elif isinstance(m, nn.Embedding):
        m.weight.data.normal_(mean=0.0, std=0.02)
        if m.padding_idx is not None:
            m.weight.data[m.padding_idx].zero_()
    elif isinstance(m, nn.LayerNorm):
        m.bias.data.zero_()
        m.weight.data.fill_(1.0)


class BertForSequenceClassification(nn.Module):
    def __init__(self, L, h, nh, i):
        super().__init__()
        self.bert = BertModel(L, h, nh, i)
        self.dropout = nn.Dropout(DROPOUT)
        self.classifier = nn.Linear(h, NUM_LABELS)
        self.apply(init_weights)

    def forward(self, input_ids, token_type_ids, attention_mask, labels):
        pooled = self.bert(input_ids, token_type_ids, attention_mask)
        logits = self.classifier(self.dropout(pooled))
        return F.cross_entropy(logits.view(-1, NUM_LABELS), labels.view(-1)), logits


class BertForMaskedLM(nn.Module):
    """transformers' BertForMaskedLM: cls.predictions (BertLMPredictionHead) on every position."""

    def __init__(self, L, h, nh, i):
        super().__init__()
        self.bert = BertModel(L, h, nh, i, add_pooling_layer=False)
        self.transform_dense = nn.Linear(h, h)
        self.transform_norm = nn.LayerNorm(h, eps=LN_EPS)
        self.decoder = nn.Linear(h, VOCAB, bias=False)
        self.bias = nn.Parameter(torch.zeros(VOCAB))
        self.apply(init_weights)
        # post_init's tie_weights: the decoder's weight is the word-embedding table itself.
        self.decoder.weight = self.bert.embeddings.word_embeddings.weight

    def forward(self, input_ids, token_type_ids, attention_mask, labels):
        x = self.bert(input_ids, token_type_ids, attention_mask)
        # .float(): autocast's fp32 op list has layer_norm since PyTorch 2.0 (a no-op there);
        # 1.13's CPU autocast passes the bf16 gelu to the fp32 LayerNorm, which rejects it.
        x = self.transform_norm(F.gelu(self.transform_dense(x)).float())
        logits = self.decoder(x) + self.bias
        return F.cross_entropy(logits.view(-1, VOCAB), labels.view(-1), ignore_index=-100), logits


def mask_tokens(input_ids, special_tokens_mask, probability, generator):
    """DataCollatorForLanguageModeling.torch_mask_tokens: (masked inputs, labels)."""
    inputs, labels = input_ids.clone(), input_ids.clone()
    chosen_p = torch.full(labels.shape, probability).masked_fill(special_tokens_mask, 0.0)
    chosen = torch.bernoulli(chosen_p, generator=generator).bool()
    labels[~chosen] = -100
    replaced = torch.bernoulli(torch.full(labels.shape, 0.8), generator=generator).bool() & chosen
    inputs[replaced] = MASK_ID
    randomized = (torch.bernoulli(torch.full(labels.shape, 0.5), generator=generator).bool()
                  & chosen & ~replaced)
    words = torch.randint(VOCAB, labels.shape, dtype=torch.long, generator=generator)
    inputs[randomized] = words[randomized]
    return inputs, labels


def cpu_stat():
    """Aggregate /proc/stat cpu jiffies: (busy, steal, total)."""
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        # user nice system idle iowait irq softirq steal guest guest_nice
        idle = v[3] + v[4]
        steal = v[7] if len(v) > 7 else 0
        total = sum(v[:8])
        return total - idle - steal, steal, total
    except Exception:
        return 0, 0, 0


def loaded_paths():
    try:
        with open("/proc/self/maps") as f:
            return {line.split()[-1] for line in f if "/" in line}
    except OSError:
        return set()


def blas_info():
    """(resolved BLAS library path, OpenBLAS core name or None) of this process."""
    import ctypes
    lib_path, core = None, None
    try:
        paths = loaded_paths()
        for p in sorted(paths):
            base = os.path.basename(p)
            if "libopenblas" in base:
                lib_path = p
                lib = ctypes.CDLL(p)
                lib.openblas_get_corename.restype = ctypes.c_char_p
                core = lib.openblas_get_corename().decode()
                break
            if base.startswith("libblas.so"):
                lib_path = os.path.realpath(p)
    except Exception:
        pass
    return lib_path, core


def main():
    torch.set_num_threads(args.threads)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass
    torch.manual_seed(args.seed)
    L, h, nh, inter = CONFIGS[args.config]
    model = (BertForMaskedLM if args.task == "mlm" else BertForSequenceClassification)(L, h, nh, inter)
    model.train()
    opt_kw = {"foreach": True} if args.adamw == "foreach" else {"fused": True} if args.adamw == "fused" else {}
    opt = torch.optim.AdamW(model.parameters(), lr=2e-5, **opt_kw)
    fwd = torch.compile(model) if args.compile else model

    params_total = sum(p.numel() for p in model.parameters())
    emb = model.bert.embeddings
    params_emb_tables = sum(t.weight.numel() for t in
                            (emb.word_embeddings, emb.position_embeddings, emb.token_type_embeddings))
    params_nonemb = params_total - params_emb_tables

    g = torch.Generator().manual_seed(args.seed + 1)
    B, S = args.batch, args.seq
    input_ids = torch.randint(1, VOCAB, (B, S), generator=g)
    token_type_ids = torch.zeros(B, S, dtype=torch.long)
    token_type_ids[:, S // 2:] = 1
    attention_mask = torch.ones(B, S, dtype=torch.long)
    labels = torch.randint(0, NUM_LABELS, (B,), generator=g)
    if args.task == "mlm":
        # One text block per row, [CLS] ... [SEP], all of segment 0, masked once (the same batch
        # every step: the time is what is measured).
        input_ids[:, 0], input_ids[:, -1] = CLS_ID, SEP_ID
        token_type_ids.zero_()
        special = torch.zeros(B, S, dtype=torch.bool)
        special[:, 0] = special[:, -1] = True
        input_ids, labels = mask_tokens(input_ids, special, args.mlm_probability, g)

    def step():
        if args.dtype == "bf16":
            with torch.autocast("cpu", dtype=torch.bfloat16):
                loss, _ = fwd(input_ids, token_type_ids, attention_mask, labels)
        else:
            loss, _ = fwd(input_ids, token_type_ids, attention_mask, labels)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss.item()

    losses = []
    c0 = time.perf_counter()
    for _ in range(args.warmup):
        losses.append(step())
    compile_s = time.perf_counter() - c0
    times = []
    st0 = cpu_stat()
    ru0 = resource.getrusage(resource.RUSAGE_SELF)
    w0 = time.perf_counter()
    for _ in range(args.steps):
        t0 = time.perf_counter()
        losses.append(step())
        times.append(time.perf_counter() - t0)

    st1 = cpu_stat()
    ru1 = resource.getrusage(resource.RUSAGE_SELF)
    wall = time.perf_counter() - w0
    proc_cpu = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
    ncpu = os.cpu_count() or 1
    dt_j = max(1, st1[2] - st0[2])
    blas_path, core = blas_info()
    tokens = B * S
    flops = 6.0 * params_nonemb * tokens + 12.0 * L * S * S * h * B
    mean_t = statistics.fmean(times)
    med_t = statistics.median(times)
    rec = {
        "kind": "bert_train",
        "framework": "pytorch",
        "task": args.task,
        "masked_tokens": int((labels != -100).sum()) if args.task == "mlm" else None,
        "config": args.config,
        "layers": L, "hidden": h, "heads": nh, "intermediate": inter,
        "batch": B, "seq": S, "dtype": args.dtype, "threads": args.threads,
        "steps": args.steps, "warmup": args.warmup,
        "step_s_mean": mean_t,
        "step_s_median": med_t,
        "step_s_min": min(times),
        "step_s_max": max(times),
        "step_s_stdev": statistics.stdev(times) if len(times) > 1 else 0.0,
        "tokens_per_s": tokens / med_t,
        "samples_per_s": B / med_t,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
        "params": params_total,
        "params_nonembedding": params_nonemb,
        "flops_per_step": flops,
        "gflops_achieved": flops / med_t / 1e9,
        # system-wide busy % of all CPUs vs this process's own CPU time as % of all CPUs during
        # the timed steps: a gap between the two means something else was running.
        "cpu_busy_pct": 100.0 * (st1[0] - st0[0]) / dt_j,
        "proc_cpu_pct": 100.0 * proc_cpu / (wall * ncpu),
        "proc_sys_s_per_step": (ru1.ru_stime - ru0.ru_stime) / max(1, args.steps),
        "cpu_steal_pct": 100.0 * (st1[1] - st0[1]) / dt_j,
        "loss_first": losses[0], "loss_last": losses[-1],
        "torch": torch.__version__,
        "aten_cpu_capability": next((l.split(":", 1)[1].strip() for l in torch.__config__.show().splitlines()
                                     if "CPU capability" in l), None),
        "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE"),
        "OPENBLAS_L2_SIZE": os.environ.get("OPENBLAS_L2_SIZE"),
        "malloc": next((os.path.basename(p) for p in sorted(loaded_paths())
                        if "tcmalloc" in p or "jemalloc" in p), "glibc"),
        "ATEN_CPU_CAPABILITY": os.environ.get("ATEN_CPU_CAPABILITY"),
        "blas_choice": args.blas,
        "blas_lib": blas_path,
        "openblas_corename": core,
        "optimizer": "AdamW(lr=2e-5, wd=0.01, %s)" % args.adamw,
        "zero_grad": "optimizer.zero_grad() (the installed torch's default set_to_none)",
        "compiled": bool(args.compile),
        "sdpa": bool(args.sdpa),
        "warmup_s": compile_s,
        "tag": args.tag,
    }
    print(json.dumps(rec), flush=True)
    if args.profile > 0:
        from torch.profiler import profile, ProfilerActivity
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            for _ in range(args.profile):
                step()
        print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=25), file=sys.stderr)


if __name__ == "__main__":
    main()
