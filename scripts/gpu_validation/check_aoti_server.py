"""Check 7 of docs/gpu-validation.md: samples/aoti_server, a C++ program serving an AOTInductor package through
libtorch, profiled by the collector and its libtorch plugin. The store of each traced run must hold one request step
per request the server made, the op census of request 2, and (on a GPU) the package's kernels, each in its request's
turn on the host clock (the check of the GPU clock's alignment, kernel_checks). The server's checksum is the same
with and without the collector.

    python check_aoti_server.py --alone alone.json --run DIR=served.json [--run DIR=served.json ...] --out result.json
"""

import argparse
import bisect
import json

from stores import open_stores

LOADER = "torch::inductor::AOTIModelPackageLoader"


def requests_of(connection):
    return connection.execute("SELECT step, start_ns, end_ns FROM steps WHERE source = 'request' ORDER BY step"
                              ).fetchall()


def kernel_checks(connection, requests):
    """Where the kernels fall against the requests (sorted by start) on the one time axis. The server copies each
    request's scores back before the next request, so a kernel starts after its request began and before the next
    one begins; with --marker the copy is inside the request, so the kernel also ends before its request does."""
    kernels = connection.execute("SELECT start_ns, end_ns, correlation_id FROM kernels").fetchall()
    starts = [r[1] for r in requests]
    between = within = 0
    for kernel_start, kernel_end, _ in kernels:
        at = bisect.bisect_right(starts, kernel_start) - 1
        if at < 0:
            continue
        next_start = starts[at + 1] if at + 1 < len(starts) else float("inf")
        between += kernel_start < next_start
        within += kernel_end <= requests[at][2]
    # AOTInductor launches its Triton kernels with cuLaunchKernel, a driver API call: the collector records the
    # driver's launch calls one by one (cuptiActivityEnableDriverApi), so each kernel should join its launch row.
    launched = connection.execute("SELECT COUNT(*) FROM kernels k JOIN api_calls a ON a.correlation_id = "
                                  "k.correlation_id AND a.pid = k.pid").fetchone()[0]
    return {"kernels": len(kernels), "start_between_their_request_and_the_next": between,
            "inside_their_request": within, "with_a_launch_row": launched}


def check_run(directory, served, alone, marker):
    stores = open_stores(directory)
    if len(stores) != 1:
        return {"passed": False, "checks": {"one store": False}, "why": f"{len(stores)} stores under {directory}"}
    _, connection = stores[0]
    requests = requests_of(connection)
    census = connection.execute("SELECT step, model, ops FROM op_census").fetchall()
    warnings = connection.execute("SELECT source, message FROM diagnostics WHERE severity <> 'info'").fetchall()
    result = {"requests_served": served["requests"], "request_steps": len(requests),
              "indices_in_order": [r[0] for r in requests] == list(range(len(requests))),
              "census": [{"step": s, "model": m, "ops": o} for s, m, o in census],
              "warnings": [f"{s}: {m}" for s, m in warnings]}
    result.update(kernel_checks(connection, requests))
    expected_model = "torchscope.request" if marker else LOADER
    checks = {
        "a request step per request": result["request_steps"] == served["requests"] and result["indices_in_order"],
        "the census of request 2": any(s == 2 and m == expected_model and o > 0 for s, m, o in census),
        "no warning": not warnings,
        "the checksum unchanged": served["checksum"] == alone["checksum"],
        "the package's kernels recorded": result["kernels"] > 0,
        "kernels joined to their launch": result["with_a_launch_row"] >= 0.99 * max(result["kernels"], 1),
        # The package's set-up may run a few kernels before the first request: 99 %, not all.
        "kernels start in their request's turn": result["start_between_their_request_and_the_next"] >= 0.99 * max(
            result["kernels"], 1),
    }
    if marker:
        checks["kernels end inside their request"] = result["inside_their_request"] >= 0.99 * max(result["kernels"], 1)
    result["checks"] = checks
    result["passed"] = all(checks.values())
    return result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--alone", required=True, help="the server's JSON line, run without the collector")
    parser.add_argument("--run", action="append", required=True,
                        help="STORE_DIR=SERVED_JSON of a traced run; a name ending in 'marker' was run with --marker")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    with open(args.alone, encoding="utf-8") as handle:
        alone = json.loads(handle.read().strip().splitlines()[-1])
    result = {"alone": alone, "runs": {}}
    for spec in args.run:
        directory, served_path = spec.split("=", 1)
        with open(served_path, encoding="utf-8") as handle:
            served = json.loads(handle.read().strip().splitlines()[-1])
        run = check_run(directory, served, alone, marker=directory.rstrip("/").endswith("marker"))
        run["served"] = served
        run["p50_ratio"] = served["p50_ms"] / alone["p50_ms"] if alone["p50_ms"] else None
        result["runs"][directory] = run
    result["passed"] = all(run["passed"] for run in result["runs"].values())
    with open(args.out, "w", encoding="utf-8") as out:
        json.dump(result, out, indent=2)
    print(json.dumps({"passed": result["passed"], "p50_ms_alone": alone["p50_ms"],
                      "runs": {d: {"checks": r["checks"], "p50_ratio": r["p50_ratio"], "kernels": r.get("kernels")}
                               for d, r in result["runs"].items()}}))
    raise SystemExit(0 if result["passed"] else 1)


if __name__ == "__main__":
    main()
