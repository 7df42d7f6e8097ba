#!/usr/bin/env bash
# Installs what building and testing gshmem needs on Debian/Ubuntu, if it is missing. Safe to run repeatedly.
# The CUDA toolkit is optional: with nvcc on PATH (or in /usr/local/cuda) the build includes GPU support.
# With the argument "python" it also makes the virtual environment the Python package's tests use (build/pyenv, or
# $GSHMEM_PYENV) and installs its pip packages there: scikit-build-core, nanobind, numpy, pytest, and mpi4py (built
# against Debian's Open MPI, for the tests that init over an MPI communicator).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
pkgs=(cmake g++ make pkg-config python3 python3-dev python3-venv libgtest-dev libfmt-dev nlohmann-json3-dev
      libcli11-dev openmpi-bin libopenmpi-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if [ "${1:-}" = python ]; then
  venv=${GSHMEM_PYENV:-$root/build/pyenv}
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  if ! "$venv/bin/python" -c "import numpy, pytest, nanobind, scikit_build_core, mpi4py" 2>/dev/null; then
    echo "install-deps: pip installing scikit-build-core nanobind numpy pytest mpi4py into $venv"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check scikit-build-core nanobind numpy pytest mpi4py
  fi
fi
