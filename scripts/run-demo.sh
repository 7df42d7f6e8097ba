#!/usr/bin/env bash
# Builds what the demo needs (the library, gshmemrun and the ring example; the test suite is built by
# run-tests.sh) and runs the ring example on 2 PEs: on GPUs if this machine has them, else on CPU PEs.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
BUILD_TARGETS="gshmemrun ring" "$root/scripts/build.sh"
exec "$root/build/bin/gshmemrun" -n "${PES:-2}" -- "$root/build/bin/ring"
