#!/usr/bin/env bash
# Installs what is missing, builds torchscope and runs the whole test suite (ctest, dev preset).
# The README's test command and .ci/run both call this script.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/build.sh" dev
cd "$root"
jobs="$(nproc 2>/dev/null || echo 2)"
ctest --preset dev -j "$jobs" "$@"
