#!/usr/bin/env bash
# Builds the Python package (CPU PEs only, into the virtual environment build/pyenv or $GSHMEM_PYENV) and runs its
# tests (python/tests: 2 and 4 CPU PEs). Arguments go to pytest.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh" python
venv=${GSHMEM_PYENV:-$root/build/pyenv}
CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)} "$venv/bin/python" -m pip install -q \
  --disable-pip-version-check --no-build-isolation "$root" --config-settings=cmake.define.GSHMEM_WITH_CUDA=OFF
cd "$root/python/tests"
PATH="$venv/bin:$PATH" exec "$venv/bin/python" -m pytest -q "$@"
