#!/usr/bin/env bash
# Installs what is missing, then configures and builds torchscope with a CMake preset (default: dev).
# Usage: scripts/build.sh [preset]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
preset="${1:-dev}"
bash "$root/scripts/bootstrap.sh"
cd "$root"
source "$root/scripts/ccache.sh"
jobs="$(nproc 2>/dev/null || echo 2)"
if [[ ! -f "build/$preset/build.ninja" ]]; then
  cmake --preset "$preset" >/dev/null
fi
cmake --build "build/$preset" -j "$jobs"
