#!/bin/sh
# Runs its arguments only where an NVIDIA GPU is usable; otherwise exits 77, which CTest reports as skipped
# (SKIP_RETURN_CODE 77). With --not-built first it always skips: the build left the GPU tests out
# (GSHMEM_GPU_TESTS=OFF, tests/CMakeLists.txt).
if [ "$1" = --not-built ]; then
  echo "SKIP: the GPU tests are left out of this build (GSHMEM_GPU_TESTS=OFF, as scripts/build.sh configures where"
  echo "      nvidia-smi finds no GPU); on a machine with a GPU, scripts/build.sh (or -DGSHMEM_GPU_TESTS=ON) builds them"
  exit 77
fi
if [ ! -e /dev/nvidia0 ] && [ ! -e /dev/nvidiactl ]; then
  echo "SKIP: no NVIDIA GPU device (/dev/nvidia0) on this machine"
  exit 77
fi
if ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
  echo "SKIP: nvidia-smi -L lists no GPU"
  exit 77
fi
exec "$@"
