#!/usr/bin/env bash
# Installs the Debian packages Kiln's build needs, then configures and builds it into build/.
# Usage (as root on Debian 12): bash scripts/setup.sh
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake ninja-build libgtest-dev libcli11-dev nlohmann-json3-dev libutf8proc-dev
  libdnnl-dev ocl-icd-opencl-dev  # dnnl-config.cmake looks for OpenCL, which libdnnl-dev only recommends
  libopenmpi-dev openmpi-bin)

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

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build build -j"$(nproc)"
