# Shared by the install tests: checks on installed files and a small job run through an installed `torchscope`.

fail() { echo "FAILED: $*" >&2; exit 1; }

# No installed file may name the source tree or the build's Python environment, and no ELF file may carry a
# RUNPATH/RPATH that is not relative to itself ($ORIGIN).
check_no_build_paths() { # check_no_build_paths FOLDER PATH...
  local folder=$1 forbidden file runpath
  shift
  for forbidden in "$@"; do
    if grep -rl --binary-files=text -F -- "$forbidden" "$folder"; then fail "installed files name $forbidden"; fi
  done
  while IFS= read -r file; do
    if head -c 4 "$file" | grep -q "ELF"; then
      runpath=$(readelf -d "$file" | grep -E "RUNPATH|RPATH" || true)
      if [[ -n "$runpath" && "$runpath" != *'[$ORIGIN'* ]]; then fail "$file has $runpath"; fi
    fi
  done < <(find "$folder" -type f)
}

# A compiled job whose scheduled learning rate makes its optimizer step recompile (tests/collector/scripts).
copy_job() { # copy_job SOURCE_DIR DESTINATION
  cp "$1/tests/collector/scripts/lr_scheduler_recompile.py" "$2/train.py"
}

# torchscope run, stats and advise on the job: the store must hold the recompiles, advise must name train.py.
profile_job() { # profile_job TORCHSCOPE PYTHON FOLDER
  local torchscope=$1 python=$2 folder=$3
  (cd "$folder" && "$torchscope" run -o run.db -- "$python" train.py) || fail "torchscope run"
  "$torchscope" stats "$folder/run.db" --format json >"$folder/stats.json" || fail "torchscope stats"
  "$python" - "$folder/stats.json" <<'PY' || fail "the store has no recompile"
import json, sys
stats = json.load(open(sys.argv[1]))
assert stats["recompiles"] > 0, stats
PY
  "$torchscope" advise "$folder/run.db" >"$folder/advice.txt" || true
  grep -q "train.py:" "$folder/advice.txt" || { cat "$folder/advice.txt"; fail "advise names no line of train.py"; }
}
