#!/usr/bin/env bash
# Builds gshmem and runs the ring example on 2 PEs: on GPUs if this machine has them, else on CPU PEs.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh"
exec "$root/build/bin/gshmemrun" -n "${PES:-2}" -- "$root/build/bin/ring"
