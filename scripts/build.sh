#!/usr/bin/env bash
# Installs what is missing, then configures and builds torchscope with a CMake preset (default: dev):
# every target, or only the targets named after the preset.
# Usage: scripts/build.sh [preset [target...]]; TORCHSCOPE_SETUP=demo installs only what the demo needs
# (scripts/bootstrap.sh).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
preset="${1:-dev}"
targets=("${@:2}")
bash "$root/scripts/bootstrap.sh" "${TORCHSCOPE_SETUP:-all}"
cd "$root"
source "$root/scripts/ccache.sh"
jobs="$(nproc 2>/dev/null || echo 2)"
# Configure when there is no build yet, or when the last configure turned optional parts off for a missing
# dependency (a demo set-up then the full one: Qt, libtorch or the CUDA headers may be there now).
cache="build/$preset/CMakeCache.txt"
if [[ ! -f "build/$preset/build.ninja" ]] || grep -q '^TORCHSCOPE_PARTS_OFF:INTERNAL=.\+' "$cache" 2>/dev/null; then
  cmake --preset "$preset" >/dev/null
fi
if ((${#targets[@]})); then
  cmake --build "build/$preset" -j "$jobs" --target "${targets[@]}"
else
  cmake --build "build/$preset" -j "$jobs"
fi
