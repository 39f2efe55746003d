#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan) into build-fuzz/ and runs each one for
# SECONDS (default 30) on a copy of its seed corpus in fuzz/corpus/<target>, printing the number
# of executions. Any crash, sanitizer report or non-kiln::Error exception fails the script.
# Usage: bash scripts/fuzz.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-30}"

if ! command -v clang++-14 >/dev/null || ! dpkg-query -W libclang-rt-14-dev >/dev/null 2>&1; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends clang-14 libclang-rt-14-dev
fi

CC=clang-14 CXX=clang++-14 cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DKILN_FUZZ=ON -DKILN_BUILD_TESTS=OFF > /dev/null
cmake --build build-fuzz -j"$(nproc)" --target fuzz_safetensors fuzz_bert_config fuzz_tokenizer fuzz_dataset fuzz_squad

for target in fuzz_safetensors fuzz_bert_config fuzz_tokenizer fuzz_dataset fuzz_squad; do
  work="build-fuzz/corpus/$target"
  mkdir -p "$work"
  cp -n fuzz/corpus/"$target"/* "$work"/
  log="build-fuzz/$target.log"
  if ! ./build-fuzz/fuzz/"$target" -max_total_time="$seconds" -rss_limit_mb=4096 -max_len=65536 \
      -print_final_stats=1 "$work" > "$log" 2>&1; then
    tail -40 "$log"
    echo "fuzz: $target FAILED (log: $log)"
    exit 1
  fi
  echo "fuzz: $target ok, $(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$') executions in ${seconds}s"
done
