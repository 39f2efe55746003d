#!/usr/bin/env bash
# bf16 mixed precision against fp32 on the README's main job (BERT tiny from scratch on the UCI
# sentiment data, 2 epochs), seeds 42 1 2 as compare_uci_accuracy.sh; the issue asks for bf16
# within 0.5 points of fp32's eval_accuracy. Usage: bash scripts/compare_uci_bf16.sh (needs build/kiln)
set -euo pipefail
cd "$(dirname "$0")/.."
work="out/compare-uci-bf16"
mkdir -p "$work"
accuracy() { grep -o '"eval_accuracy": [0-9.]*' "$1/eval_results.json" | grep -o '[0-9.]*$'; }
for precision in fp32 bf16; do
  flags=()
  [[ $precision == bf16 ]] && flags=(--bf16)
  for seed in 42 1 2; do
    out="$work/$precision-$seed"
    ./build/kiln train --config_name tiny --tokenizer_name data/vocab/bert-base-uncased-vocab.txt \
      --train_file data/classification/uci-sentiment.tsv --no_header \
      --column_names label,source,text --validation_split_percentage 10 --max_seq_length 64 \
      --per_device_train_batch_size 32 --per_device_eval_batch_size 64 --learning_rate 1e-3 \
      --warmup_ratio 0.1 --weight_decay 0.01 --num_train_epochs 2 --logging_steps 20 --do_eval \
      --disable_tqdm --seed "$seed" --output_dir "$out" --overwrite_output_dir "${flags[@]}" \
      > "$out.log" 2>&1
    echo "$precision seed $seed: eval_accuracy $(accuracy "$out")"
  done
done
