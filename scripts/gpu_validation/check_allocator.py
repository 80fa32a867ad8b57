"""Check 6 of docs/gpu-validation.md: the store's CUDA allocator series equal torch.cuda.memory_stats() of the
same job at the same step ends (allocator_job.py wrote them). Store step k ends at the (k+1)-th
optimizer.step() (step 0 starts at the first zero_grad()), so it is compared with entry k.

    python check_allocator.py --store-dir DIR --expected stats.json --out result.json
"""

import argparse
import json

from stores import open_stores


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--store-dir", required=True)
    parser.add_argument("--expected", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    with open(args.expected, encoding="utf-8") as handle:
        expected = json.load(handle)
    recorded = {}
    for _, connection in open_stores(args.store_dir):
        for series, step, value in connection.execute(
                "SELECT series, step, value FROM memory_samples WHERE device = ? AND series LIKE 'cuda.%' "
                "AND step >= 0", (expected["device"],)):
            recorded[(series, step)] = value
    mismatches = []
    compared = 0
    for step, figures in enumerate(expected["after_step"]):
        for series, value in figures.items():
            compared += 1
            got = recorded.get((series, step))
            if got != value:
                mismatches.append({"step": step, "series": series, "memory_stats": value, "store": got})
    result = {"compared": compared, "mismatches": mismatches[:50], "mismatch_count": len(mismatches),
              "passed": compared > 0 and not mismatches}
    with open(args.out, "w", encoding="utf-8") as out:
        json.dump(result, out, indent=2)
    print(json.dumps({key: result[key] for key in ("compared", "mismatch_count", "passed")}))
    raise SystemExit(0 if result["passed"] else 1)


if __name__ == "__main__":
    main()
