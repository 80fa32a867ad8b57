#!/usr/bin/env bash
# Installs what is missing, builds what the demo needs (the torchscope command without the GUI and
# optimize tools, and the collector library; scripts/build.sh dev builds everything) and runs the demo: the
# bundled sample profiled on the CPU, its findings, the fixes applied and the speed-up measured.
# Arguments go to `torchscope demo`.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TORCHSCOPE_SETUP=demo bash "$root/scripts/build.sh" dev torchscope_core torchscope_collector
# The sample runs with the project's environment (the built torchscope names no Python of its own).
export TORCHSCOPE_PYTHON="${TORCHSCOPE_PYTHON:-${TORCHSCOPE_VENV:-$root/.venv}/bin/python}"
exec "$root/build/dev/bin/torchscope" demo "$@"
