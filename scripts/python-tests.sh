#!/usr/bin/env bash
# Builds the Python package and runs its tests (python/tests; arguments go to pytest).
#   Default (CI, this machine): CPU PEs only, into the virtual environment build/pyenv (or $GSHMEM_PYENV), whose
#   pip packages install-deps.sh provides.
#   GSHMEM_PY_TARGET=<dir>: install into that folder with the python on PATH (or $PYTHON), which already has the
#   build requirements (scikit-build-core, nanobind), torch / CuPy / mpi4py if the tests should use them: the GPU
#   machine, which has no internet. GSHMEM_PY_CUDA=ON builds libgshmem with GPU support (default OFF).
#   GSHMEM_PY_INSTALL_ONLY=1: install, run no tests (scripts/gpu-all.sh's pybench step).
#   GSHMEM_PY_PREBUILT=<dir> (with GSHMEM_PY_TARGET and GSHMEM_PY_CUDA=ON): the package already built with CUDA
#   (scripts/gpu-prebuilt.sh pack: build-gpu/py-site) is copied to the target instead of built, when it was built
#   for this python's version; otherwise it says why and builds.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cuda=${GSHMEM_PY_CUDA:-OFF}
defs=(--config-settings=cmake.define.GSHMEM_WITH_CUDA="$cuda")
# GSHMEM_PY_ARCH=90: build for that CUDA architecture only (default: the project's list)
[ -n "${GSHMEM_PY_ARCH:-}" ] && defs+=(--config-settings=cmake.define.GSHMEM_CUDA_ARCHITECTURES="$GSHMEM_PY_ARCH")
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}
if [ -n "${GSHMEM_PY_TARGET:-}" ]; then
  py=${PYTHON:-python3}
  rm -rf "$GSHMEM_PY_TARGET"
  pre=${GSHMEM_PY_PREBUILT:-}
  tag=$("$py" -c 'import sys; print("cpython-%d%d-" % sys.version_info[:2])')
  if [ -n "$pre" ] && [ "$cuda" = ON ] && compgen -G "$pre/gshmem/_gshmem.$tag*.so" >/dev/null &&
       [ "$(cat "$pre/cuda-arch.txt" 2>/dev/null)" = "${GSHMEM_PY_ARCH:-90}" ]; then
    cp -a "$pre" "$GSHMEM_PY_TARGET"
    rm -f "$GSHMEM_PY_TARGET/cuda-arch.txt"
    echo "python-tests.sh: the package built with CUDA by gpu-prebuilt.sh pack ($pre), not built here"
  else
    [ -z "$pre" ] || echo "python-tests.sh: $pre is not a CUDA build for this python and architecture ($tag," \
                          "sm_${GSHMEM_PY_ARCH:-90}; GSHMEM_PY_CUDA=$cuda): building the package here"
    "$py" -m pip install -q --disable-pip-version-check --no-build-isolation --no-deps --no-index \
      --target "$GSHMEM_PY_TARGET" "$root" "${defs[@]}"
  fi
  export PYTHONPATH=$GSHMEM_PY_TARGET${PYTHONPATH:+:$PYTHONPATH} PATH=$GSHMEM_PY_TARGET/bin:$PATH
else
  "$root/scripts/install-deps.sh" python
  venv=${GSHMEM_PYENV:-$root/build/pyenv}
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-build-isolation "$root" "${defs[@]}"
  py=$venv/bin/python
  export PATH=$venv/bin:$PATH
fi
[ "${GSHMEM_PY_INSTALL_ONLY:-0}" = 1 ] && exit 0
cd "$root/python/tests"
# pytest's tmp_path folders go under build/ (emptied at each run), not /tmp/pytest-of-<user>: nothing left in /tmp.
mkdir -p "$root/build/pytest-tmp"
exec "$py" -m pytest -q --basetemp="$root/build/pytest-tmp" "$@"
