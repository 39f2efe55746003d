#!/usr/bin/env python3
"""Prints the OPENBLAS_CORETYPE the PyTorch 1.13 peer runs with on this CPU (the benchmark scripts
pass it as bert_torch.py's --openblas-coretype): OpenBLAS's AVX-512 kernels where the CPU has
AVX-512 (Cooperlake with AVX512-BF16, else SkylakeX), otherwise `unset` (OpenBLAS autodetects: it
knows the AVX2 cores, Haswell and Zen). Debian 12's OpenBLAS 0.3.21 does not know CPUs newer than
it and falls back to Prescott (SSE3) on them: on an Intel Xeon of family 6, model 207 (AVX-512,
AVX512-BF16) its sgemm ran 64 GFLOP/s against 291-308 with Cooperlake forced (BERT-base's
shapes, 2 threads), and PyTorch 1.13's BERT-mini step 2.5x slower (2,476 against 6,246 tok/s).
Under KILN_MAX_CPU_ISA=avx2 or sse41 (the cap the peer's other libraries get from
ATEN_CPU_CAPABILITY, MKL_ENABLE_INSTRUCTIONS and ONEDNN_MAX_CPU_ISA): Haswell, its AVX2 kernels.
Usage: python3 scripts/openblas_core.py"""
import os


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def core():
    if os.environ.get("KILN_MAX_CPU_ISA", "").lower() in ("avx2", "sse41"):
        return "Haswell"
    flags = cpu_flags()
    if "avx512_bf16" in flags:
        return "Cooperlake"
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= flags:
        return "SkylakeX"
    return "unset"


if __name__ == "__main__":
    print(core())
