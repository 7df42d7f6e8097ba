#!/usr/bin/env bash
# Configures and builds gshmem into build/ (GPU support when nvcc is found, else CPU PEs only). Arguments go to the
# configure step; BUILD_TARGETS="a b" builds only those targets (and what they need), e.g. the demo's;
# GSHMEM_CUDA_ARCHITECTURES="90" (environment) is -DGSHMEM_CUDA_ARCHITECTURES=90 where no argument sets it (CI builds
# the library for one architecture: it only compiles there, and the second one doubled its heaviest files).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [[ -n ${GSHMEM_CUDA_ARCHITECTURES:-} && " $* " != *-DGSHMEM_CUDA_ARCHITECTURES=* ]]; then
  set -- "$@" "-DGSHMEM_CUDA_ARCHITECTURES=$GSHMEM_CUDA_ARCHITECTURES"
fi
"$root/scripts/install-deps.sh"
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH=/usr/local/cuda/bin:$PATH; fi
# No GPU here (CI): the tests, benchmark and examples are only compiled, so one architecture for them (the library
# keeps all of GSHMEM_CUDA_ARCHITECTURES). A machine with a GPU builds them for every architecture, as asked.
# The one architecture: the last of a -DGSHMEM_CUDA_ARCHITECTURES=... given here (so -rdc tests link against the
# library's code), else 90. With a GPU the setting is cleared, so a build folder configured earlier without one
# does not keep it.
# Without a GPU the programs of the tests that only run on one are not built either (GSHMEM_GPU_TESTS=OFF, about 7
# of CI's 28 minutes on 2 cores; tests/CMakeLists.txt): those tests skip, saying so. With a GPU it is set ON again.
gpu=0
nvidia-smi -L >/dev/null 2>&1 && gpu=1
arch=()
if [[ " $* " != *GSHMEM_TEST_CUDA_ARCHITECTURES* ]]; then
  if [ $gpu = 1 ]; then
    arch=(-DGSHMEM_TEST_CUDA_ARCHITECTURES=)
  else
    one=90
    for a in "$@"; do [[ $a == -DGSHMEM_CUDA_ARCHITECTURES=* ]] && one=${a##*[=;]}; done
    arch=(-DGSHMEM_TEST_CUDA_ARCHITECTURES="$one")
  fi
fi
if [[ " $* " != *-DGSHMEM_GPU_TESTS=* ]]; then
  arch+=(-DGSHMEM_GPU_TESTS=$([ $gpu = 1 ] && echo ON || echo OFF))
fi
cmake -S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${arch[@]}" "$@" >/dev/null
targets=()
for t in ${BUILD_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$root/build" -j"$(nproc)" "${targets[@]}"
