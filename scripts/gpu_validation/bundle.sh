#!/usr/bin/env bash
# Builds what the GPU checks need into a movable tree that a machine without this project's build
# dependencies can run: the lent GPU machine (docs/gpu-validation.md, "On a lent GPU machine") has CUDA,
# torch, cmake and ninja, but not fmt, nlohmann-json, CLI11 or Qt.
#   scripts/gpu_validation/bundle.sh [DEST]     (default: .gpu in the checkout, kept out of git)
# DEST then holds the installed layout (bin/torchscope, lib/libtorchscope_collector.so, share/torchscope) and
# lib/deps with the one shared library the CLI needs beyond glibc, libstdc++, zlib and SQLite (fmt), stripped, and
# include/nlohmann (the libtorch plugin's one header-only dependency): about 6 MB that travel with the checkout. The CUDA sample is compiled there by device.sh, with that
# machine's nvcc, for its GPU.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
dest="$(realpath -m "${1:-$root/.gpu}")"
build="$root/build/gpu-bundle"
cd "$root"
bash scripts/bootstrap.sh
source scripts/ccache.sh
jobs="$(nproc 2>/dev/null || echo 2)"

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF -DTORCHSCOPE_WERROR=ON \
  -DTORCHSCOPE_WITH_GUI=OFF -DTORCHSCOPE_WITH_LIBTORCH=OFF -DTORCHSCOPE_WITH_CUPTI=ON \
  -DTORCHSCOPE_WITH_CUDA_SAMPLES=OFF >/dev/null
grep -q '^TORCHSCOPE_WITH_CUPTI:BOOL=ON' "$build/CMakeCache.txt" ||
  { echo "bundle: CUPTI headers not found (CUDA toolkit under /usr/local/cuda?): GPU tracing would be off" >&2; exit 1; }
cmake --build "$build" -j "$jobs" --target torchscope torchscope_collector
rm -rf "$dest"
cmake --install "$build" --prefix "$dest" --component runtime >/dev/null
mkdir -p "$dest/lib/deps"
cp -L "$(ldd "$dest/bin/torchscope" | awk '/libfmt\.so/ {print $3}')" "$dest/lib/deps/"
strip --strip-unneeded "$dest/bin/torchscope" "$dest/lib/libtorchscope_collector.so"
# nlohmann-json's headers, for the libtorch plugin that check 7 compiles there (build_libtorch_parts.sh).
json_header=$(echo '#include <nlohmann/json.hpp>' | c++ -std=c++20 -x c++ -M - | tr ' \\' '\n\n' | grep -m1 '/nlohmann/json.hpp$')
mkdir -p "$dest/include"
cp -r "$(dirname "$json_header")" "$dest/include/"
# The checks and their jobs come from the checkout itself (scripts/gpu_validation, samples/).
if git rev-parse --git-dir >/dev/null 2>&1 && [[ $dest == "$root/.gpu" ]]; then
  exclude="$(git rev-parse --git-path info/exclude)"
  grep -qx '/.gpu/' "$exclude" 2>/dev/null || echo '/.gpu/' >>"$exclude"
fi
du -sh "$dest"
"$dest/bin/torchscope" --version
