#!/usr/bin/env bash
# Processes against threads on this machine, in one run: the same BERT training step and global
# batch as `kiln bench` in 1 process with all cores as threads, then under `mpirun -np N` with
# cores/N threads per process (one core each by default, bound as mpirun binds). Prints each
# median step time, the bytes all-reduced and the time waited per step, and the ratio of the
# 1-process time to the N-process one (above 1: the processes are faster). Exits non-zero when a
# run fails.
#
# Usage: bash scripts/bench_mpi.sh [--config base] [--processes 2] [--batch 16] [--seq 128]
#          [--steps 10] [--warmup 2] [--out FILE]
# Needs build/kiln and mpirun (bash scripts/setup.sh); timings need an idle machine.
set -euo pipefail
cd "$(dirname "$0")/.."

config=base processes=2 batch=16 seq=128 steps=10 warmup=2
out="out/bench-mpi/bench-$(date +%Y%m%d-%H%M%S).jsonl"
while (($#)); do
  case "$1" in
    --config) config="$2" ;;
    --processes) processes="$2" ;;
    --batch) batch="$2" ;;
    --seq) seq="$2" ;;
    --steps) steps="$2" ;;
    --warmup) warmup="$2" ;;
    --out) out="$2" ;;
    *) echo "bench_mpi: unknown option $1" >&2; exit 2 ;;
  esac
  shift 2
done
cores="$(nproc)"
((batch % processes == 0)) || { echo "bench_mpi: --batch must divide by --processes" >&2; exit 2; }
((cores >= processes)) || { echo "bench_mpi: more processes than the $cores cores" >&2; exit 2; }
mkdir -p "$(dirname "$out")"
root=()
[ "$(id -u)" -eq 0 ] && root=(--allow-run-as-root)
common=(bench --config "$config" --seq "$seq" --steps "$steps" --warmup "$warmup")

./build/kiln "${common[@]}" --batch "$batch" --threads "$cores" --tag "1 process" | tee "$out"
mpirun "${root[@]}" -np "$processes" ./build/kiln "${common[@]}" --batch $((batch / processes)) \
  --threads $((cores / processes)) --tag "$processes processes" | tee -a "$out"

python3 - "$out" <<'PY'
import json, sys
one, many = [json.loads(line) for line in open(sys.argv[1])]
print(f"\n{one['config']} fp32, global batch {one['batch']} x {one['seq']}, {one['cpu_model']}")
for run in (one, many):
    print(f"  {run['processes']} process(es) x {run['threads']} threads: median step "
          f"{run['step_s_median']:.3f} s, all-reduce {run['all_reduce_bytes_per_step'] / 1e6:.1f} MB "
          f"and {run['all_reduce_wait_ms_per_step']:.1f} ms waited per step")
print(f"  ratio (1-process time / {many['processes']}-process time): "
      f"{one['step_s_median'] / many['step_s_median']:.3f}")
PY
