#!/usr/bin/env bash
# Installs what is missing, builds torchscope and runs the whole test suite (ctest, dev preset),
# then the sanitizer builds (scripts/sanitize.sh: asan and tsan, only the targets they test).
# The README's test command and .ci/run both call this script. Arguments go to the dev ctest;
# TORCHSCOPE_SANITIZERS picks the sanitizer presets ("asan tsan" by default, "" for none).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/build.sh" dev
cd "$root"
# Builds that tests start themselves (the pip wheel's) compile through the same cache.
source "$root/scripts/ccache.sh"
jobs="$(nproc 2>/dev/null || echo 2)"
ctest --preset dev -j "$jobs" "$@"
read -ra sanitizers <<<"${TORCHSCOPE_SANITIZERS-asan tsan}"
if ((${#sanitizers[@]})); then
  bash "$root/scripts/sanitize.sh" "${sanitizers[@]}"
fi
