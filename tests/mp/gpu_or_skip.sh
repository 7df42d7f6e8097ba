#!/bin/sh
# Runs its arguments only where an NVIDIA GPU is usable; otherwise exits 77, which CTest reports as skipped
# (SKIP_RETURN_CODE 77).
if [ ! -e /dev/nvidia0 ] && [ ! -e /dev/nvidiactl ]; then
  echo "SKIP: no NVIDIA GPU device (/dev/nvidia0) on this machine"
  exit 77
fi
if ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
  echo "SKIP: nvidia-smi -L lists no GPU"
  exit 77
fi
exec "$@"
