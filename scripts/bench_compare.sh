#!/usr/bin/env bash
# Kiln against PyTorch on the same machine in the same run: `kiln bench` and
# ../shared/bench/peer/bert_torch.py (tuned: OpenBLAS-OpenMP with the kernels of
# scripts/openblas_core.py, tcmalloc)
# on synthetic BERT training steps, for every config x dtype, alternating the two so that machine
# load hits both alike. Prints a Markdown table (tokens/s, fraction of this CPU's peak measured by
# `kiln bench`, peak RSS, their ratios) and then the raw JSON lines, which are also kept in --out.
# With --devices cpu,pjrt:cpu the same Kiln step also runs through XLA:CPU (the PJRT plugin of
# PyPI's xla-cpu-pjrt, found as `kiln devices` finds it, or --pjrt_plugin PATH): Kiln's own
# compiler against XLA's on the same graph, as extra columns.
# Losses: each row also shows both sides' first and last loss and marks (with "⚠ ...") a row
# whose numbers disagree; see LOSS CHECKS below for the tolerances. A failed run (either side)
# prints no table: the script names the failed runs and exits 1. A marked row exits 1 too, after
# the table.
#
# Usage: bash scripts/bench_compare.sh [--configs tiny,mini,...] [--dtypes fp32,bf16]
#          [--steps 10] [--warmup 3] [--large-steps 3] [--large-warmup 1] [--batch 16] [--seq 128]
#          [--threads N] [--out FILE] [--peer PATH/bert_torch.py] [--python /usr/bin/python3]
#          [--devices cpu[,pjrt:cpu]] [--pjrt_plugin PATH] [--pjrt_configs tiny,mini,base]
# (--pjrt_configs: the configs the pjrt devices run; default all of --configs.)
# Needs build/kiln (bash scripts/setup.sh) and the Debian packages of the peer README
# (python3-torch python3-numpy libopenblas0-openmp libtcmalloc-minimal4). Timings need an idle
# machine: check cpu_busy_pct against proc_cpu_pct in the raw lines.
set -euo pipefail
cd "$(dirname "$0")/.."

configs="tiny,mini,small,medium,base,large"
dtypes="fp32,bf16"
steps=10 warmup=3 large_steps=3 large_warmup=1 batch=16 seq=128
threads="$(nproc)"
out="out/bench-compare/bench-$(date +%Y%m%d-%H%M%S).jsonl"
peer="../shared/bench/peer/bert_torch.py"
python=/usr/bin/python3
devices=cpu
pjrt_plugin=()
pjrt_configs=""

while (($#)); do
  case "$1" in
    --configs) configs="$2" ;;
    --dtypes) dtypes="$2" ;;
    --steps) steps="$2" ;;
    --warmup) warmup="$2" ;;
    --large-steps) large_steps="$2" ;;
    --large-warmup) large_warmup="$2" ;;
    --batch) batch="$2" ;;
    --seq) seq="$2" ;;
    --threads) threads="$2" ;;
    --out) out="$2" ;;
    --peer) peer="$2" ;;
    --python) python="$2" ;;
    --devices) devices="$2" ;;
    --pjrt_plugin) pjrt_plugin=(--pjrt_plugin "$2") ;;
    --pjrt_configs) pjrt_configs="$2" ;;
    -h | --help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench_compare: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  (($# >= 2)) || { echo "bench_compare: $1 needs a value" >&2; exit 2; }
  shift 2
done

for config in ${configs//,/ }; do
  case "$config" in tiny | mini | small | medium | base | large) ;;
    *) echo "bench_compare: unknown config '$config' (tiny mini small medium base large)" >&2; exit 2 ;;
  esac
done
for dtype in ${dtypes//,/ }; do
  case "$dtype" in fp32 | bf16) ;;
    *) echo "bench_compare: unknown dtype '$dtype' (fp32 bf16)" >&2; exit 2 ;;
  esac
done
[ -d build ] || { echo "bench_compare: no build/ folder; run bash scripts/setup.sh first" >&2; exit 1; }
[ -f "$peer" ] || { echo "bench_compare: no peer script at $peer (--peer PATH)" >&2; exit 1; }
"$python" -c "import torch" 2>/dev/null || {
  echo "bench_compare: $python cannot import torch; install the peer README's Debian packages:" >&2
  echo "  apt-get install -y python3-torch python3-numpy libopenblas0-openmp libtcmalloc-minimal4" >&2
  exit 1
}
cmake --build build --target kiln > /dev/null

mkdir -p "$(dirname "$out")"
: > "$out"
echo "bench_compare: batch $batch, seq $seq, $threads threads; raw lines in $out" >&2
openblas_core=$("$python" scripts/openblas_core.py)  # OpenBLAS's kernels for this CPU (and cap)
failed=()
for config in ${configs//,/ }; do
  n="$steps" w="$warmup"
  if [ "$config" = large ]; then n="$large_steps" w="$large_warmup"; fi
  for dtype in ${dtypes//,/ }; do
    echo "bench_compare: $config $dtype: pytorch, then kiln" >&2
    "$python" "$peer" --config "$config" --dtype "$dtype" --batch "$batch" --seq "$seq" \
      --steps "$n" --warmup "$w" --threads "$threads" --blas openblas-openmp \
      --openblas-coretype "$openblas_core" --malloc tcmalloc --tag bench_compare >> "$out" ||
      failed+=("pytorch $config $dtype")
    for device in ${devices//,/ }; do
      plugin=()
      if [ "$device" != cpu ]; then
        [ -z "$pjrt_configs" ] || [[ ",$pjrt_configs," == *",$config,"* ]] || continue
        plugin=("${pjrt_plugin[@]}")
      fi
      ./build/kiln bench --config "$config" --dtype "$dtype" --batch "$batch" --seq "$seq" \
        --steps "$n" --warmup "$w" --threads "$threads" --device "$device" "${plugin[@]}" \
        --tag bench_compare >> "$out" || failed+=("kiln $config $dtype on $device")
    done
  done
done

if ((${#failed[@]})); then
  printf 'bench_compare: failed: %s\n' "${failed[@]}" >&2
  echo "bench_compare: no table; the runs that finished are in $out" >&2
  exit 1
fi

"$python" - "$out" <<'PY'
import json, math, sys

# LOSS CHECKS. Both sides train BertForSequenceClassification (2 labels) on one fixed synthetic
# batch with AdamW(lr 2e-5, wd 0.01), but their initial weights and batches come from different
# generators (Kiln's Philox, torch's), so their losses cannot be equal; what holds for both:
# - the first loss is near ln 2: at HF's init (normal(0, 0.02), zero biases) the pooler's
#   pre-activations have std 0.02 sqrt(hidden) <= 0.55, so each logit has std <= 0.02 sqrt(hidden)
#   * 0.5 ~ 0.28 and their difference d ~ 0.4; a row's cross-entropy is ln 2 - y d / 2 + d^2 / 8,
#   and the mean of 16 rows is ln 2 + 0.02 +- 0.05 (measured 0.67 to 0.77 on tiny, mini and a
#   base layer, both sides): 0.25 is 5 standard deviations;
# - the loss does not rise beyond dropout's noise: updates on the same batch lower it, but slowly
#   at lr 2e-5 (measured over 12 updates: 0.01 to 0.1 lower on tiny and mini, both sides), and a
#   step's dropout masks move it by about 0.005 (Kiln tiny rose 0.6831 -> 0.6854 over 3 updates),
#   so the direction cannot be required of a short run; a rise above 0.05 (10 times that noise)
#   is divergence.
# Kiln through XLA (pjrt devices) runs the same graph on the same weights, batch and dropout
# masks as Kiln's CPU backend, so its losses equal Kiln's within float reordering: 1e-4 relative
# in fp32, one bf16 ulp (2^-8) in bf16 (measured on tiny: equal in fp32, 2e-6 in bf16).
LN2_BAND = 0.25
DROPOUT_NOISE = 0.05
SAME_GRAPH_RTOL = {"fp32": 1e-4, "bf16": 2 ** -8}


def loss_problems(dtype, sides):
    problems = []
    for name, record in sides.items():
        first, last = record.get("loss_first"), record.get("loss_last")
        if first is None or last is None or not (math.isfinite(first) and math.isfinite(last)):
            problems.append(f"{name} losses missing or not finite")
            continue
        if abs(first - math.log(2)) > LN2_BAND:
            problems.append(f"{name} first loss {first:.4f} not ln 2 ± {LN2_BAND}")
        if last > first + DROPOUT_NOISE:
            problems.append(f"{name} loss rose ({first:.4f} → {last:.4f})")
    if "kiln" in sides and "xla" in sides:
        for key in ("loss_first", "loss_last"):
            k, x = sides["kiln"].get(key), sides["xla"].get(key)
            if k is not None and x is not None and abs(k - x) > SAME_GRAPH_RTOL[dtype] * abs(k):
                problems.append(f"XLA {key} {x:.6f} ≠ Kiln's {k:.6f}")
    return problems


rows = {}
lines = [line for line in open(sys.argv[1]) if line.strip()]
for line in lines:
    record = json.loads(line)
    side = "torch"
    if record.get("framework") == "kiln":
        side = "kiln" if record.get("device") == "cpu" else "xla"
    rows.setdefault((record["config"], record["dtype"]), {})[side] = record

def number(value, digits=0):
    return "–" if value is None else f"{value:,.{digits}f}"

def ratio(a, b):
    return "–" if a is None or b is None or b == 0 else f"{a / b:.2f}×"

with_xla = any("xla" in sides for sides in rows.values())
xla_head = " XLA:CPU tok/s | Kiln/XLA:CPU | XLA:CPU RSS MiB | XLA:CPU compile ms |" if with_xla else ""
print("| config | dtype | PyTorch tok/s | Kiln tok/s | Kiln/PyTorch | PyTorch % peak "
      "| Kiln % peak | PyTorch RSS MiB | Kiln RSS MiB | Kiln/PyTorch RSS | Kiln compile ms "
      "| kernels | busy % (PyTorch/Kiln) | loss first→last (PyTorch; Kiln) | losses |" + xla_head)
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|" + "---|" * (4 if with_xla else 0))
marked = 0
order = ["tiny", "mini", "small", "medium", "base", "large"]
for (config, dtype) in sorted(rows, key=lambda k: (order.index(k[0]), k[1] != "fp32")):
    torch, kiln = rows[(config, dtype)].get("torch", {}), rows[(config, dtype)].get("kiln", {})
    xla = rows[(config, dtype)].get("xla", {})
    xla_cells = (f" {number(xla.get('tokens_per_s'))} "
                 f"| {ratio(kiln.get('tokens_per_s'), xla.get('tokens_per_s'))} "
                 f"| {number(xla.get('peak_rss_mib'))} | {number(xla.get('compile_ms'))} |"
                 if with_xla else "")
    peak = kiln.get("peak_gflops") or None  # measured by kiln bench, for this dtype
    torch_peak = torch["gflops_achieved"] / peak * 100 if peak and torch else None
    kiln_peak = kiln["peak_fraction"] * 100 if kiln.get("peak_fraction") is not None else None
    problems = loss_problems(dtype, rows[(config, dtype)])
    marked += bool(problems)
    losses = "; ".join(f"{r['loss_first']:.4f}→{r['loss_last']:.4f}" for r in (torch, kiln)
                       if r.get("loss_first") is not None and r.get("loss_last") is not None)
    print(f"| {config} | {dtype} | {number(torch.get('tokens_per_s'))} "
          f"| {number(kiln.get('tokens_per_s'))} "
          f"| {ratio(kiln.get('tokens_per_s'), torch.get('tokens_per_s'))} "
          f"| {number(torch_peak, 1)} | {number(kiln_peak, 1)} "
          f"| {number(torch.get('peak_rss_mib'))} | {number(kiln.get('peak_rss_mib'))} "
          f"| {ratio(kiln.get('peak_rss_mib'), torch.get('peak_rss_mib'))} "
          f"| {number(kiln.get('compile_ms'))} | {number(kiln.get('kernels'))} "
          f"| {number(torch.get('cpu_busy_pct'))}/{number(kiln.get('cpu_busy_pct'))} "
          f"| {losses} | {'⚠ ' + '; '.join(problems) if problems else 'agree'} |" + xla_cells)
if rows:
    kiln_any = next((r["kiln"] for r in rows.values() if "kiln" in r), None)
    if kiln_any:
        print(f"\nPeak measured by kiln bench on {kiln_any['threads']} threads "
              f"({kiln_any['cpu_model']}): fp32 {kiln_any['peak_fp32_gflops']:.0f} GFLOP/s, "
              f"bf16 {kiln_any['peak_bf16_gflops']:.0f} GFLOP/s.")
print("\nRaw JSONL:\n```")
for line in lines:
    print(line.rstrip())
print("```")
if marked:
    print(f"bench_compare: the losses of {marked} row(s) disagree (⚠ in the table)", file=sys.stderr)
    sys.exit(1)
PY
