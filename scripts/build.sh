#!/usr/bin/env bash
# Installs what is missing, then configures and builds torchscope with a CMake preset (default: dev):
# every target, or only the targets named after the preset.
# Usage: scripts/build.sh [preset [target...]]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
preset="${1:-dev}"
targets=("${@:2}")
bash "$root/scripts/bootstrap.sh"
cd "$root"
jobs="$(nproc 2>/dev/null || echo 2)"
if [[ ! -f "build/$preset/build.ninja" ]]; then
  cmake --preset "$preset" >/dev/null
fi
if ((${#targets[@]})); then
  cmake --build "build/$preset" -j "$jobs" --target "${targets[@]}"
else
  cmake --build "build/$preset" -j "$jobs"
fi
