"""The per-rank stores of a run folder read by an existing distributed engine: Dask (dask.distributed).

Every store is an ordinary SQLite file, so each Dask task opens one rank's store with Python's sqlite3 and runs
the per-rank aggregates in SQL where the file lies; only a few numbers per rank travel back to the client, which
puts the ranks side by side (per-rank step table, time in collectives, the slowest rank outside collectives).
On a cluster the workers read the run folder from the shared file system the ranks wrote it to, e.g.
`--scheduler tcp://head:8786`; without it a local cluster of `--workers` processes is started.

Usage: python bench/ranks_dask.py RUN_FOLDER [--workers N] [--scheduler ADDRESS]
(pip install -r bench/requirements.txt; docs/architecture.md, "Beyond one machine").
"""

import argparse
import glob
import os
import re
import sqlite3
import statistics
import time

import dask
from dask.distributed import Client, LocalCluster

# What each worker computes in SQL from one rank's store (docs/FORMAT.md).
_RANK_SQL = {
    "rank": "SELECT coalesce(max(rank), -1) FROM processes WHERE rank >= 0",
    "host": "SELECT host FROM run",
    "steps": "SELECT count(*) FROM steps",
    "step_seconds": "SELECT group_concat((end_ns - start_ns) / 1e9) FROM (SELECT * FROM steps ORDER BY step)",
    "events": "SELECT (SELECT count(*) FROM kernels) + (SELECT count(*) FROM api_calls) + (SELECT count(*) FROM cpu_ops)"
              " + (SELECT count(*) FROM memcpy) + (SELECT count(*) FROM syncs)",
    "nccl_seconds": "SELECT coalesce(sum(end_ns - start_ns), 0) / 1e9 FROM kernels WHERE name_id IN "
                    "(SELECT id FROM strings WHERE value LIKE '%nccl%')",
    "host_collective_seconds": "SELECT coalesce(sum(end_ns - start_ns), 0) / 1e9 FROM cpu_ops WHERE category = 'collective'",
    "recompiles": "SELECT count(*) FROM recompiles",
}


def rank_summary(path):
    """Runs on a worker: one rank's aggregates, read-only."""
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        row = {key: connection.execute(sql).fetchone()[0] for key, sql in _RANK_SQL.items()}
    finally:
        connection.close()
    steps = [float(value) for value in (row.pop("step_seconds") or "").split(",") if value]
    row["path"] = os.path.basename(path)
    row["step_median"] = statistics.median(steps[1:]) if len(steps) > 1 else (steps[0] if steps else 0.0)
    return row


def stores_of(folder):
    def rank_of(path):
        match = re.search(r"\.rank(\d+)\.", os.path.basename(path))
        return int(match.group(1)) if match else -1
    return sorted(glob.glob(os.path.join(folder, "*.db")), key=lambda path: (rank_of(path), path))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--scheduler", help="address of a running Dask scheduler (default: a local cluster)")
    options = parser.parse_args()
    stores = stores_of(options.folder)
    if not stores:
        parser.error(f"{options.folder}: no store (*.db)")
    cluster = None if options.scheduler else LocalCluster(n_workers=options.workers, threads_per_worker=1,
                                                          processes=True, dashboard_address=None)
    with Client(options.scheduler or cluster) as client:
        begin, cpu_begin = time.perf_counter(), time.process_time()
        ranks = dask.compute(*[dask.delayed(rank_summary)(path) for path in stores])
        elapsed = time.perf_counter() - begin
        ranks = [rank for rank in ranks if rank["rank"] >= 0]
        print(f"{'rank':>4} {'host':<8} {'events':>9} {'steps':>5} {'step median':>12} {'NCCL':>9} {'recompiles':>10}")
        for rank in ranks:
            print(f"{rank['rank']:>4} {rank['host']:<8} {rank['events']:>9} {rank['steps']:>5} "
                  f"{rank['step_median'] * 1e3:>9.2f} ms {rank['nccl_seconds']:>7.2f} s {rank['recompiles']:>10}")
        median_step = statistics.median(rank["step_median"] for rank in ranks)
        slowest = max(ranks, key=lambda rank: rank["step_median"])
        recompile_counts = statistics.multimode(rank["recompiles"] for rank in ranks)
        divergent = [rank["rank"] for rank in ranks if rank["recompiles"] not in recompile_counts]
        print(f"{len(ranks)} ranks, {sum(rank['events'] for rank in ranks)} events in {elapsed:.2f} s on "
              f"{len(client.scheduler_info()['workers'])} Dask workers (client CPU {time.process_time() - cpu_begin:.2f} s)")
        print(f"slowest rank {slowest['rank']}: step median {slowest['step_median'] * 1e3:.2f} ms against "
              f"{median_step * 1e3:.2f} ms for the median rank; ranks with other recompile counts: {divergent}")
    if cluster is not None:
        cluster.close()


if __name__ == "__main__":
    main()
