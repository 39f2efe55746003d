#!/usr/bin/env python3
"""Prints the OPENBLAS_CORETYPE the PyTorch 1.13 peer runs with (the benchmark scripts pass it as
bert_torch.py's --openblas-coretype): OpenBLAS's kernels for the instruction set Kiln uses here,
as `kiln devices` reports it (its own detection, under KILN_MAX_CPU_ISA if set, the cap the
peer's other libraries get from ATEN_CPU_CAPABILITY, MKL_ENABLE_INSTRUCTIONS and
ONEDNN_MAX_CPU_ISA). avx512_core_bf16 and avx512_core_amx: Cooperlake; avx512_core: SkylakeX;
avx2 and sse41 under a cap: Haswell, its AVX2 kernels; without a cap: `unset` (OpenBLAS
autodetects: it knows the AVX2 cores, Haswell and Zen). Debian 12's OpenBLAS 0.3.21 does not know
CPUs newer than it and falls back to Prescott (SSE3) on them: on an Intel Xeon of family 6,
model 207 (AVX-512, AVX512-BF16) its sgemm ran 64 GFLOP/s against 291-308 with Cooperlake forced
(BERT-base's shapes, 2 threads), and PyTorch 1.13's BERT-mini step 2.5x slower (2,476 against
6,246 tok/s).
Usage: python3 scripts/openblas_core.py [path to kiln, default build/kiln]"""
import subprocess
import sys

CORES = {"avx512_core_amx": "Cooperlake", "avx512_core_bf16": "Cooperlake",
         "avx512_core": "SkylakeX", "avx2": "Haswell", "sse41": "Haswell"}


def core(kiln):
    devices = subprocess.run([kiln, "devices"], check=True, capture_output=True, text=True).stdout
    # "  in use:   avx2 (KILN_MAX_CPU_ISA=avx2); loop kernels avx2, oneDNN avx2"
    in_use = next(line for line in devices.splitlines() if line.strip().startswith("in use:"))
    level = in_use.split(":", 1)[1].split()[0].rstrip(";")
    capped = "KILN_MAX_CPU_ISA=" in in_use
    if level.startswith("avx512") or capped:
        return CORES[level]
    return "unset"


if __name__ == "__main__":
    print(core(sys.argv[1] if len(sys.argv) > 1 else "build/kiln"))
