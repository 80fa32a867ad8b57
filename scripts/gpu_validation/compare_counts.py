"""Compares the collector's kernel/memcpy/memset counts with a reference and writes the verdict.

  compare_counts.py program  --store-dir D --expected cuda_syncs.json --out result.json
      reference: the counts cuda_syncs printed for itself (must match exactly)
  compare_counts.py profiler --store-dir D --run collector_run.json --reference profiler_run.json --out result.json
      reference: torch.profiler's counts for the same measured steps (must be within 1 %); the
      collector's rows are those that start inside the measured window of its own run
"""
import argparse
import json
import sys

from stores import diagnostics, total

TABLES = {"kernels": "kernels", "memcpys": "memcpy", "memsets": "memset"}


def collector_counts(store_dir, window=None):
    counts = {}
    for key, table in TABLES.items():
        if window is None:
            counts[key] = total(store_dir, f"SELECT COUNT(*) FROM {table}")
        else:
            counts[key] = total(store_dir, f"SELECT COUNT(*) FROM {table} WHERE start_ns >= ? AND start_ns <= ?",
                                window)
    return counts


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["program", "profiler"])
    parser.add_argument("--store-dir", required=True)
    parser.add_argument("--expected", help="cuda_syncs --counts-json output (program mode)")
    parser.add_argument("--run", help="train_gpu.py --out of the collector run (profiler mode)")
    parser.add_argument("--reference", help="train_gpu.py --out of the torch.profiler run (profiler mode)")
    parser.add_argument("--tolerance", type=float, default=0.01)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()

    if args.mode == "program":
        with open(args.expected) as f:
            expected = json.load(f)
        reference = {key: expected[key] for key in TABLES}
        measured = collector_counts(args.store_dir)
        tolerance = 0.0
        extra = {
            "pageable_memcpys": {"expected": expected["pageable_memcpys"],
                                 "measured": total(args.store_dir, "SELECT COUNT(*) FROM memcpy WHERE pageable = 1")},
            "located_syncs": {"expected": expected["stream_syncs"] + expected["device_syncs"] +
                              expected["event_syncs"] + expected["blocking_memcpys"],
                              "measured": total(args.store_dir, "SELECT COUNT(*) FROM syncs WHERE origin = 'cupti' "
                                                                "AND sync_kind IN ('stream','device','event','memcpy')")},
            "nvtx_ranges": {"expected": expected["nvtx_ranges"],
                            "measured": total(args.store_dir, "SELECT COUNT(*) FROM nvtx WHERE kind = 'range'")},
        }
    else:
        with open(args.run) as f:
            run = json.load(f)
        with open(args.reference) as f:
            reference = json.load(f)["profiler_counts"]
        measured = collector_counts(args.store_dir, (run["window_start_ns"], run["window_end_ns"]))
        tolerance = args.tolerance
        extra = {}

    rows = {}
    ok = True
    for key in TABLES:
        ref, got = reference[key], measured[key]
        within = abs(got - ref) <= tolerance * max(ref, 1)
        ok = ok and within
        rows[key] = {"reference": ref, "collector": got, "ok": within}
    for key, pair in extra.items():
        pair["ok"] = pair["expected"] == pair["measured"]
        ok = ok and pair["ok"]
    result = {"mode": args.mode, "tolerance": tolerance, "ok": ok, "counts": rows, "checks": extra,
              "diagnostics": diagnostics(args.store_dir)}
    with open(args.out, "w") as f:
        json.dump(result, f, indent=2)
    print(json.dumps({"ok": ok, "counts": rows, "checks": extra}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
