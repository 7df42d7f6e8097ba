#!/usr/bin/env bash
# Builds gshmem and runs the whole test suite (GPU tests report as skipped on machines without a GPU).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh"
cd "$root/build"
exec ctest --output-on-failure -j"$(nproc)" "$@"
