#!/usr/bin/env bash
# Runs every real-GPU check of docs/gpu-validation.md and writes the results under RESULTS_DIR.
#   scripts/gpu_validation/run_all.sh BUILD_DIR RESULTS_DIR
# BUILD_DIR must hold lib/libtorchscope_collector.so and bin/cuda_syncs (bin/libtorch_train
# is used when built). PYTHON (default .venv/bin/python) must have a CUDA build of torch.
# Exit code: 0 when every check passed, 1 otherwise (the results say which).
set -uo pipefail

BUILD=$(realpath "${1:?usage: run_all.sh BUILD_DIR RESULTS_DIR}")
OUT=$(realpath -m "${2:?usage: run_all.sh BUILD_DIR RESULTS_DIR}")
HERE=$(dirname "$(realpath "$0")")
PYTHON=${PYTHON:-$(dirname "$(dirname "$HERE")")/.venv/bin/python}
COLLECTOR=$BUILD/lib/libtorchscope_collector.so
STEPS=${STEPS:-100}
ITERATIONS=${ITERATIONS:-20}
failed=0

mkdir -p "$OUT"/{cuda_syncs,counts,syncs,libtorch,overhead,allocator}
{ nvidia-smi; "$PYTHON" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'; } \
  > "$OUT/environment.txt" 2>&1

traced() {  # traced STORE_DIR COMMAND...: runs COMMAND under the collector, its store in STORE_DIR
  local dir=$1; shift
  TORCHSCOPE_OUTPUT="$dir/run.db" LD_PRELOAD="$COLLECTOR" "$@"
}
check() {  # check NAME COMMAND...: runs a check, records failure
  echo "== $1"; shift
  "$@" || { echo "!! failed: $*"; failed=1; }
}

# 1. The CUDA sample: counts it printed for itself against the store (exact).
check "cuda_syncs under the collector" traced "$OUT/cuda_syncs" "$BUILD/bin/cuda_syncs" \
  --iterations "$ITERATIONS" --counts-json "$OUT/cuda_syncs/expected.json"
check "cuda_syncs counts" "$PYTHON" "$HERE/compare_counts.py" program --store-dir "$OUT/cuda_syncs" \
  --expected "$OUT/cuda_syncs/expected.json" --out "$OUT/cuda_syncs/result.json"

# 2. Kernel and memcpy counts against torch.profiler for the same measured steps (within 1 %).
check "train_gpu under torch.profiler" "$PYTHON" "$HERE/train_gpu.py" --steps "$STEPS" \
  --profile "$OUT/counts/profiler.trace.json" --out "$OUT/counts/profiler_run.json"
check "train_gpu under the collector" traced "$OUT/counts" "$PYTHON" "$HERE/train_gpu.py" --steps "$STEPS" \
  --out "$OUT/counts/collector_run.json"
check "counts vs torch.profiler" "$PYTHON" "$HERE/compare_counts.py" profiler --store-dir "$OUT/counts" \
  --run "$OUT/counts/collector_run.json" --reference "$OUT/counts/profiler_run.json" \
  --out "$OUT/counts/result.json"

# 3. Syncs attributed to the right Python lines, with blocked time.
check "sync_lines under the collector" traced "$OUT/syncs" "$PYTHON" "$HERE/sync_lines.py" \
  --iterations "$ITERATIONS"
check "sync attribution" "$PYTHON" "$HERE/check_syncs.py" --store-dir "$OUT/syncs" \
  --script "$HERE/sync_lines.py" --iterations "$ITERATIONS" --out "$OUT/syncs/result.json"

# 4. The libtorch sample: a C++ job with no interpreter.
if [[ -x $BUILD/bin/libtorch_train ]]; then
  check "libtorch_train under the collector" traced "$OUT/libtorch" "$BUILD/bin/libtorch_train" --steps 50
fi

# 5. Overhead on the median step time: none vs collector vs torch.profiler, in one invocation.
check "overhead" "$PYTHON" "$HERE/overhead.py" --collector "$COLLECTOR" --python "$PYTHON" \
  --repetitions "${REPETITIONS:-5}" --steps 200 --out "$OUT/overhead"

# 6. The CUDA allocator series at each step end equal torch.cuda.memory_stats() of the same job.
check "allocator_job under the collector" traced "$OUT/allocator" "$PYTHON" "$HERE/allocator_job.py" --steps 30 \
  --out "$OUT/allocator/expected.json"
check "allocator figures" "$PYTHON" "$HERE/check_allocator.py" --store-dir "$OUT/allocator" \
  --expected "$OUT/allocator/expected.json" --out "$OUT/allocator/result.json"

echo "results in $OUT"
exit $failed
