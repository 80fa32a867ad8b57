#!/usr/bin/env bash
# The GPU checks in one command per phase, for a lent GPU machine that has CUDA, torch, cmake and ninja but none
# of the project's build dependencies (docs/gpu-validation.md, "On a lent GPU machine"). The checkout travels
# with the tree that scripts/gpu_validation/bundle.sh built here (.gpu, or TORCHSCOPE_BUNDLE).
#   scripts/gpu_validation/device.sh checks OUT   # checks 1-3, 5, 6 of run_all.sh and extra_checks.py
#   scripts/gpu_validation/device.sh rdl OUT      # samples/rdl_hm profiled, advised and fixed on the GPU
#   scripts/gpu_validation/device.sh aoti OUT     # check 7: samples/aoti_server, a C++ AOTInductor server, profiled
# OUT receives a summary (summary.txt, also printed), results-<phase>.tar.gz with every result file and log,
# and the stores the timeline screenshots need, gzipped. Environment: PYTHON (python3), STEPS (100),
# ITERATIONS (20), REPETITIONS (3), RDL_SCALE (small), RDL_FIXES (the findings' fixes), RDL_REPETITIONS (3),
# REQUESTS (300).
# Exit code: 0 when every check of the phase passed, 1 otherwise, 2 when it could not start.
set -uo pipefail
phase=${1:?usage: device.sh checks|rdl|aoti OUT}
out=$(realpath -m "${2:?usage: device.sh checks|rdl|aoti OUT}")
here=$(dirname "$(realpath "$0")")
root=$(dirname "$(dirname "$here")")
bundle=$(realpath -m "${TORCHSCOPE_BUNDLE:-$root/.gpu}")
export PYTHON=${PYTHON:-python3}
work=${TMPDIR:-/tmp}/torchscope-gpu-$phase
rm -rf "$work" && mkdir -p "$work" "$out"
[[ -x $bundle/bin/torchscope && -f $bundle/lib/libtorchscope_collector.so ]] ||
  { echo "device: no bundle at $bundle (run scripts/gpu_validation/bundle.sh before the checkout travels)"; exit 2; }
collector=$bundle/lib/libtorchscope_collector.so
torchscope() { LD_LIBRARY_PATH="$bundle/lib/deps${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$bundle/bin/torchscope" "$@"; }

# The collector accepts the libcupti of the CUDA major version it was built for: that of torch's own CUDA
# (the pip package), else the toolkit's.
cupti=$("$PYTHON" - <<'EOF'
import glob, importlib.util, os
try:
    spec = importlib.util.find_spec("nvidia.cuda_cupti")
except ModuleNotFoundError:
    spec = None
folders = list(spec.submodule_search_locations) if spec and spec.submodule_search_locations else []
folders += ["/usr/local/cuda/extras/CUPTI/lib64", "/usr/local/cuda/targets/x86_64-linux/lib", "/usr/local/cuda/lib64"]
found = [path for folder in folders for path in sorted(glob.glob(os.path.join(folder, "**", "libcupti.so.*"),
                                                                  recursive=True))]
print(found[0] if found else "")
EOF
)
[[ -n $cupti ]] && export TORCHSCOPE_CUPTI_LIBRARY=$cupti
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1
  "$PYTHON" -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda",
torch.version.cuda, "gpu", torch.cuda.get_device_name() if torch.cuda.is_available() else None)' 2>&1
  echo "libcupti ${cupti:-not found}"
  torchscope --version
} >"$work/environment.txt"
cat "$work/environment.txt"
summary=$work/summary.txt
: >"$summary"
failed=0
note() { echo "$*" | tee -a "$summary"; }
step() {  # step NAME COMMAND...: runs one part, its output in a log, its verdict in the summary
  local name=$1 started=$SECONDS; shift
  "$@" >"$work/$name.log" 2>&1
  local status=$?
  ((status == 0)) || failed=1
  note "$name: $([[ $status == 0 ]] && echo passed || echo "FAILED (exit $status, $work/$name.log)") in $((SECONDS - started)) s"
}

case "$phase" in
  checks)
    nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
    build_cuda_syncs() {  # for this machine's GPU (native), else Hopper
      local arch
      for arch in native sm_90; do
        "$nvcc" -std=c++17 -O2 -arch="$arch" "$root/samples/cuda_syncs/cuda_syncs.cu" -o "$bundle/bin/cuda_syncs" -ldl &&
          return 0
      done
      return 1
    }
    step build_cuda_syncs build_cuda_syncs
    step run_all env STEPS="${STEPS:-100}" ITERATIONS="${ITERATIONS:-20}" REPETITIONS="${REPETITIONS:-3}" \
      bash "$here/run_all.sh" "$bundle" "$work/r"
    step extra_checks "$PYTHON" "$here/extra_checks.py" --collector "$collector" --cuda-syncs "$bundle/bin/cuda_syncs" \
      --python "$PYTHON" --out "$work/r/extra"
    for dir in cuda_syncs counts syncs allocator; do
      [[ -d $work/r/$dir ]] && ls "$work/r/$dir"/*.db >/dev/null 2>&1 &&
        torchscope advise "$work/r/$dir" --format json >"$work/r/$dir/advise.json" 2>"$work/r/$dir/advise.err"
    done
    for file in "$work"/r/*/result.json "$work/r/overhead/overhead.md"; do
      [[ -f $file ]] && note "$(basename "$(dirname "$file")"): $(head -c 600 "$file" | tr '\n' ' ')"
    done
    for dir in counts syncs; do
      [[ -f $work/r/$dir/run.db ]] && gzip -c "$work/r/$dir/run.db" >"$out/$dir.db.gz"
    done
    ;;
  rdl)
    cd "$root" || exit 2
    mkdir -p "$work/rdl"
    step rdl_profile torchscope run -o "$work/rdl/profile.db" -- "$PYTHON" -m samples.rdl_hm.train \
      --scale "${RDL_SCALE:-small}" --device cuda
    step rdl_advise torchscope advise "$work/rdl/profile.db" --format json -o "$work/rdl/advise.json"
    fixes=()
    [[ -n ${RDL_FIXES:-} ]] && fixes=(--fixes "$RDL_FIXES")
    step rdl_fix torchscope fix "$work/rdl/profile.db" "${fixes[@]}" --repetitions "${RDL_REPETITIONS:-3}" \
      --timeout 300 --format json -o "$work/rdl/fix.json"
    [[ -f $work/rdl/fix.json ]] && "$PYTHON" - "$work/rdl/fix.json" <<'EOF' | tee -a "$summary"
import json, sys
report = json.load(open(sys.argv[1]))
print("verdicts on", report.get("verdict_metric"), "- runs", report.get("runs"))
for fix in report.get("fixes", []) + ([report["combined"]] if report.get("combined") else []):
    print(fix.get("id"), fix.get("status"), "speed-up", fix.get("speedup"), "parity",
          (fix.get("parity") or {}).get("ok"), "-", fix.get("reason"))
EOF
    [[ -f $work/rdl/profile.db ]] && gzip -c "$work/rdl/profile.db" >"$out/rdl_profile.db.gz"
    ;;
  aoti)
    # The plugin and the server link libtorch, so they are compiled here against this machine's torch (the bundle
    # has neither); the package is compiled for this machine's GPU.
    device=$("$PYTHON" -c 'import torch; print("cuda" if torch.cuda.is_available() else "cpu")')
    note "device for the package: $device"
    step build_libtorch_parts bash "$here/build_libtorch_parts.sh" "$PYTHON" "$bundle"
    step export_package "$PYTHON" "$root/samples/aoti_server/export_ranker.py" "$work/ranker.pt2" --device "$device"
    server=("$bundle/bin/aoti_server" "$work/ranker.pt2" --requests "${REQUESTS:-300}" --device "$device")
    served() {  # served OUTPUT COMMAND...: the server's JSON line in OUTPUT
      local output=$1; shift
      "$@" >"$output"
    }
    mkdir -p "$work/aoti/run" "$work/aoti/marker"
    step serve_alone served "$work/aoti/alone.json" "${server[@]}"
    step serve_traced served "$work/aoti/run/served.json" torchscope run -o "$work/aoti/run/run.db" -- "${server[@]}"
    step serve_traced_marker served "$work/aoti/marker/served.json" torchscope run -o "$work/aoti/marker/run.db" -- \
      "${server[@]}" --marker
    step check_aoti_server "$PYTHON" "$here/check_aoti_server.py" --alone "$work/aoti/alone.json" \
      --run "$work/aoti/run=$work/aoti/run/served.json" --run "$work/aoti/marker=$work/aoti/marker/served.json" \
      --out "$work/aoti/result.json"
    [[ -f $work/aoti/result.json ]] && note "aoti: $(head -c 600 "$work/check_aoti_server.log" | tr '\n' ' ')"
    [[ -f $work/aoti/run/run.db ]] && torchscope advise "$work/aoti/run/run.db" --format json \
      >"$work/aoti/advise.json" 2>"$work/aoti/advise.err"
    [[ -f $work/aoti/run/run.db ]] && gzip -c "$work/aoti/run/run.db" >"$out/aoti_server.db.gz"
    ;;
  *)
    echo "device: unknown phase $phase (checks, rdl or aoti)"
    exit 2
    ;;
esac

cp "$work/environment.txt" "$summary" "$out/"
tar -czf "$out/results-$phase.tar.gz" -C "$work" --exclude='*.db' --exclude='*.db-wal' --exclude='*.db-shm' .
note "phase $phase: $([[ $failed == 0 ]] && echo 'every step passed' || echo 'some steps FAILED')"
cp "$summary" "$out/"
exit $failed
