#!/usr/bin/env bash
# Installs what building and testing gshmem needs on Debian/Ubuntu, if it is missing. Safe to run repeatedly.
# The CUDA toolkit is optional: with nvcc on PATH (or in /usr/local/cuda) the build includes GPU support.
set -euo pipefail
pkgs=(cmake g++ make pkg-config python3 libgtest-dev libfmt-dev nlohmann-json3-dev libcli11-dev
      openmpi-bin libopenmpi-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "install-deps: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
