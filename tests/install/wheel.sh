#!/usr/bin/env bash
# The pip install end to end: builds the wheel with scikit-build-core, installs it into a new virtual environment that
# gets torch 2.13.0 (CPU) from pip like a user's, and runs a compiled job through it: `torchscope run`, `stats`,
# `advise`, `fix` and `python -m torchscope`, from a folder outside the source tree.
# Usage: wheel.sh SOURCE_DIR PYTHON (the project's Python, which has scikit-build-core: scripts/bootstrap.sh)
set -euo pipefail
source_dir=$1 python=$2
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

work=$(mktemp -d -t torchscope-wheel.XXXXXX)
trap 'rm -rf "$work"' EXIT
seconds() { date +%s; }

# The wheel's CMake build lives in build/wheel (pyproject.toml), so only the first build compiles everything.
started=$(seconds)
CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2} \
  "$python" -m pip wheel -q --no-build-isolation --no-deps -w "$work/dist" "$source_dir" || fail "building the wheel"
wheel=$(ls "$work"/dist/torchscope-*.whl)
echo "wheel: $(basename "$wheel") built in $(($(seconds) - started)) s"

# What a user has: a new environment with torch from pip (the CPU build, as requirements.txt pins it).
started=$(seconds)
"$python" -m venv "$work/venv"
env_python=$work/venv/bin/python
"$env_python" -m pip install -q --no-compile "torch==2.13.0" || fail "installing torch into the new environment"
echo "new environment with torch in $(($(seconds) - started)) s"
started=$(seconds)
"$env_python" -m pip install -q --no-compile "$wheel" || fail "pip install $(basename "$wheel")"
echo "pip install of the wheel in $(($(seconds) - started)) s"

check_no_build_paths "$work/venv/bin/torchscope" "$source_dir" "$(realpath "$source_dir")"
check_no_build_paths "$work/venv/lib/libtorchscope_collector.so" "$source_dir" "$(realpath "$source_dir")"
check_no_build_paths "$work/venv/share/torchscope" "$source_dir" "$(realpath "$source_dir")"

# The job, as a user runs it: the environment activated (its bin/ first on PATH), nothing of the build around.
job=$work/job
mkdir "$job"
copy_job "$source_dir" "$job"
export PATH="$work/venv/bin:$PATH" VIRTUAL_ENV=$work/venv
unset TORCHSCOPE_COLLECTOR_LIBRARY TORCHSCOPE_BRIDGE_DIR TORCHSCOPE_PYTHON PYTHONPATH
[[ "$(command -v torchscope)" == "$work/venv/bin/torchscope" ]] || fail "torchscope is not the environment's"
profile_job torchscope python "$job"

version=$(cd "$job" && python -m torchscope --version)
[[ "$version" == "torchscope "* ]] || fail "python -m torchscope --version printed '$version'"
(cd "$job" && python -c 'import torchscope; torchscope.step()') || fail "import torchscope outside a run"

# fix re-runs the job with the runtime fix of its finding (a tensor learning rate) and measures it.
(cd "$job" && torchscope fix --repetitions 1 --warmup-steps 0 --fixes tensor-lr --format json -o fix.json \
   -- python train.py) || fail "torchscope fix"
python - "$job/fix.json" <<'PY' || fail "fix did not remove the recompiles"
import json, sys
report = json.load(open(sys.argv[1]))
fix = next(f for f in report["fixes"] if f["id"] == "tensor-lr")
assert report["baseline"]["recompiles"] > 0 and fix["recompiles_after"] == 0, report
PY

# Without the tools, gui and optimize say what is missing (the wheel carries neither Qt nor libtorch).
if ! command -v torchscope-gui >/dev/null; then
  if torchscope gui "$job/run.db" 2>"$job/gui.err"; then fail "gui ran without torchscope-gui"; fi
  grep -q "torchscope-gui is not installed" "$job/gui.err" || fail "gui: $(cat "$job/gui.err")"
fi
