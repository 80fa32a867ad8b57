#!/usr/bin/env bash
# Installs what is missing, builds what the demo needs (the torchscope command with the tools it
# starts, and the collector library; scripts/test.sh builds everything) and runs the demo: the
# bundled sample profiled on the CPU, its findings, the fixes applied and the speed-up measured.
# Arguments go to `torchscope demo`.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/build.sh" dev torchscope torchscope_collector
exec "$root/build/dev/bin/torchscope" demo "$@"
