"""Checks that every `# expect-sync: KIND` line of a script got located sync rows from CUPTI, with
blocked time, and writes the per-line table (count, kind, total and median blocked time)."""
import argparse
import json
import os
import re
import statistics
import sys

from stores import open_stores

MARKER = re.compile(r"#\s*expect-sync:\s*(\w[\w-]*)")


def expected_lines(script):
    with open(script) as f:
        return {number: match.group(1) for number, line in enumerate(f, start=1) if (match := MARKER.search(line))}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store-dir", required=True)
    parser.add_argument("--script", required=True)
    parser.add_argument("--iterations", type=int, required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()

    expected = expected_lines(args.script)
    script_name = os.path.basename(args.script)
    by_line, unattributed = {}, 0
    for _, connection in open_stores(args.store_dir):
        rows = connection.execute(
            "SELECT file, line, sync_kind, end_ns - start_ns FROM syncs_v WHERE origin = 'cupti'").fetchall()
        for file, line, kind, blocked in rows:
            if os.path.basename(file) != script_name:
                unattributed += 1
                continue
            by_line.setdefault(line, []).append((kind, blocked))

    table, ok = [], True
    for line, kind in sorted(expected.items()):
        found = by_line.get(line, [])
        kinds = sorted({k for k, _ in found})
        blocked = [b for _, b in found]
        line_ok = len(found) >= args.iterations and kind in kinds and all(b > 0 for b in blocked)
        ok = ok and line_ok
        table.append({"line": line, "expected_kind": kind, "rows": len(found), "kinds": kinds, "ok": line_ok,
                      "blocked_total_ms": sum(blocked) / 1e6,
                      "blocked_median_us": statistics.median(blocked) / 1e3 if blocked else None})
    unexpected = {line: len(rows) for line, rows in by_line.items() if line not in expected}
    result = {"ok": ok, "lines": table, "rows_on_unmarked_lines": unexpected,
              "rows_not_in_script": unattributed}
    with open(args.out, "w") as f:
        json.dump(result, f, indent=2)
    print(json.dumps(result, indent=2))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
