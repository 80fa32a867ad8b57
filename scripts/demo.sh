#!/usr/bin/env bash
# Installs what is missing, builds torchscope and runs the demo: the bundled sample profiled on
# the CPU, its findings, the fixes applied and the speed-up measured.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/build.sh" dev
# The sample runs with the project's environment (the built torchscope names no Python of its own).
export TORCHSCOPE_PYTHON="${TORCHSCOPE_PYTHON:-${TORCHSCOPE_VENV:-$root/.venv}/bin/python}"
exec "$root/build/dev/bin/torchscope" demo "$@"
