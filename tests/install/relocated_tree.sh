#!/usr/bin/env bash
# `cmake --install` into one prefix, then the tree is moved: the moved torchscope must still find its collector, the
# Python bridge, torchscope_compiler and its tools, libtorch through the job's torch, and name no path of the build.
# Usage: relocated_tree.sh SOURCE_DIR BUILD_DIR PYTHON
set -euo pipefail
source_dir=$1 build_dir=$2 python=$3
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

work=$(mktemp -d -t torchscope-relocated.XXXXXX)
trap 'rm -rf "$work"' EXIT
cmake --install "$build_dir" --prefix "$work/installed" --strip >/dev/null
mv "$work/installed" "$work/moved"
prefix=$work/moved
venv=$("$python" -c 'import sys; print(sys.prefix)')
check_no_build_paths "$prefix" "$source_dir" "$(realpath "$source_dir")" "$build_dir" "$venv" "$(realpath "$venv")"
for expected in bin/torchscope lib/libtorchscope_collector.so share/torchscope/python/sitecustomize.py \
                share/torchscope/compiler/torchscope_compiler/launch.py share/torchscope/samples/rdl_hm/train.py; do
  [[ -e "$prefix/$expected" ]] || fail "the install has no $expected"
done

# The job runs with the project's Python, from a folder outside the source tree; nothing points into the build.
job=$work/job
mkdir "$job"
copy_job "$source_dir" "$job"
export PATH="$prefix/bin:$PATH"
unset TORCHSCOPE_COLLECTOR_LIBRARY TORCHSCOPE_BRIDGE_DIR
profile_job torchscope "$python" "$job"

# `python -m torchscope` from the installed bridge folder runs the moved binary.
version=$(PYTHONPATH="$prefix/share/torchscope/python" "$python" -m torchscope --version)
[[ "$version" == "torchscope "* ]] || fail "python -m torchscope --version printed '$version'"

# torchscope-optimize carries no libtorch path: it runs on the torch of TORCHSCOPE_PYTHON.
if [[ -x "$prefix/bin/torchscope-optimize" ]]; then
  "$python" -c 'import sys, torch; torch.jit.script(torch.nn.Linear(4, 2)).save(sys.argv[1])' "$job/model.pt"
  TORCHSCOPE_PYTHON=$python torchscope optimize "$job/model.pt" --input 2,4 --rounds 1 --iterations 2 --format json \
    >"$job/optimize.json" || fail "torchscope optimize with the job's torch"
  grep -q '"variants"' "$job/optimize.json" || fail "optimize wrote no variants: $(cat "$job/optimize.json")"
  if LD_LIBRARY_PATH= "$prefix/bin/torchscope-optimize" "$job/model.pt" --input 2,4 >/dev/null 2>&1; then
    fail "torchscope-optimize found a libtorch on its own"
  fi
fi

# The moved collector loads its libtorch plugin (beside it) into a native program with libtorch: a server whose
# package is missing fails, and its store says whether the plugin attached (a warning when not).
if [[ -f "$prefix/lib/libtorchscope_libtorch.so" && -x "$build_dir/bin/aoti_server" ]]; then
  if torchscope run -o "$job/server.db" -- "$build_dir/bin/aoti_server" "$job/missing.pt2" >/dev/null 2>&1; then
    fail "aoti_server served a missing package"
  fi
  "$python" - "$job/server.db" <<'EOF_PY' || fail "the moved collector did not attach its libtorch plugin"
import sqlite3, sys
warnings = sqlite3.connect(sys.argv[1]).execute(
    "SELECT message FROM diagnostics WHERE message LIKE '%requests and operators are not recorded%'").fetchall()
sys.exit(f"{warnings}" if warnings else 0)
EOF_PY
fi

# torchscope-gui, when built, starts from the moved tree (offscreen).
if [[ -x "$prefix/bin/torchscope-gui" ]]; then
  QT_QPA_PLATFORM=offscreen torchscope gui "$job/run.db" --screenshot "$job/timeline.png" >/dev/null 2>&1 \
    || fail "torchscope gui from the moved tree"
  [[ -s "$job/timeline.png" ]] || fail "torchscope gui wrote no screenshot"
fi
