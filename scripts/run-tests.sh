#!/usr/bin/env bash
# Builds gshmem and runs the whole test suite (GPU tests report as skipped on machines without a GPU), then the
# Python package's tests (scripts/python-tests.sh, CPU PEs). Arguments go to ctest, and then only ctest runs;
# GSHMEM_SKIP_PYTHON=1 leaves the Python tests out.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh"
(cd "$root/build" && ctest --output-on-failure -j"$(nproc)" "$@")
if [ $# -eq 0 ] && [ "${GSHMEM_SKIP_PYTHON:-0}" != 1 ]; then
  "$root/scripts/python-tests.sh"
fi
