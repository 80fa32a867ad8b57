#!/usr/bin/env bash
# Records the stores RealJobTablesTest reads (once: they are committed gzipped, and the goldens in ../golden/real/
# follow from them). Usage, from the repository root after a dev build:
#   bash tests/analyzer/real/record.sh && TORCHSCOPE_UPDATE_GOLDEN=1 ctest --test-dir build/dev -R RealJobTables
# The test's kRecordedRoot must name the repository root the jobs ran from. rdl_demo.db.gz is the profile of
# `torchscope demo --profile-only --workdir DIR` (DIR/rdl_hm.db, vacuumed and gzipped the same way).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
cd "$root"
torchscope=build/dev/bin/torchscope
python=.venv/bin/python
here=tests/analyzer/real
export TORCHSCOPE_SAMPLE_HZ=100
record() {
  local name="$1"
  shift
  rm -f "$here/$name.db" "$here/$name.db.gz"
  "$torchscope" run -o "$here/$name.db" --no-summary -- "$@"
  "$python" -c "import sqlite3, sys; sqlite3.connect(sys.argv[1]).execute('VACUUM')" "$here/$name.db"
  gzip -9 -n "$here/$name.db"
}
record lstm_lm "$python" "$here/lstm_lm.py" 40
record tiny_compiled "$python" "$here/tiny_compiled.py" 6
TORCHSCOPE_FIXES=eager record tiny_eager "$python" "$here/tiny_compiled.py" 6
record transformer "$python" tests/analyzer/regions/compiled_regions.py 12
record rdl_tuned "$python" -m samples.rdl_hm.train --scale tiny --tuned
