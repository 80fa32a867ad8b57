"""A synthetic run folder of many ranks analysed by `torchscope advise --dask` on local Dask clusters of 1 and 2
workers (docs/performance.md, "Analysis on Dask"). Every figure is the product's own: each task runs the map step
(`torchscope advise --rank-facts`) on one store and only its facts travel; this machine merges them.

Measured: the wall time of the whole command and of its map phase, per rank; the facts that travelled per rank (the
driver's own count of compressed bytes); the client's peak memory (the driver process) and the merge's
(`torchscope advise --from-facts` of the same facts, under GNU time); the map step of one store run alone, which is
what the projection to N workers rests on: map phase ~ ranks x map time / N + the cluster's start.

Usage: python bench/ranks_dask.py [--folder DIR] [--ranks 1024] [--events 50000] [--workers 1 2]
(pip install -r bench/requirements.txt; build/dev/bench/bench_ranks and build/dev/bin/torchscope built.)
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def timed(arguments):
    """(seconds, CPU seconds of the process tree, completed process)."""
    before = os.times()
    begin = time.perf_counter()
    done = subprocess.run(arguments, capture_output=True, text=True)
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return time.perf_counter() - begin, cpu, done


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", default=os.path.join(tempfile.gettempdir(), "torchscope-ranks-dask"))
    parser.add_argument("--ranks", type=int, default=1024)
    parser.add_argument("--events", type=int, default=50000)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--build", default=os.path.join(ROOT, "build", "dev"))
    options = parser.parse_args()
    torchscope = os.path.join(options.build, "bin", "torchscope")
    folder = os.path.join(options.folder, f"{options.ranks}x{options.events}")
    if not os.path.isdir(folder):
        seconds, _, done = timed([os.path.join(options.build, "bench", "bench_ranks"), "--build-only", folder,
                                  str(options.ranks), str(options.events)])
        if done.returncode != 0:
            sys.exit(done.stderr)
        print(f"built {folder} in {seconds:.0f} s")
    stores = sorted(name for name in os.listdir(folder) if name.endswith(".db"))
    store_bytes = sum(os.path.getsize(os.path.join(folder, name)) for name in stores)
    print(f"{len(stores)} stores of {options.events} events, {store_bytes / len(stores) / 2**20:.1f} MiB a store "
          f"({store_bytes / 2**30:.2f} GiB in all); {os.cpu_count()} CPUs")

    # The map step alone, on a sample of stores, and the merge of every store's facts.
    facts = os.path.join(options.folder, "facts")
    os.makedirs(facts, exist_ok=True)
    sample = stores[:: max(1, len(stores) // 16)]
    map_seconds = []
    for name in stores:
        output = os.path.join(facts, name + ".facts.json")
        seconds, _, done = timed([torchscope, "advise", "--rank-facts", os.path.join(folder, name), "-o", output])
        if done.returncode != 0:
            sys.exit(done.stderr)
        if name in sample:
            map_seconds.append(seconds)
    facts_bytes = sum(os.path.getsize(os.path.join(facts, name)) for name in os.listdir(facts))
    merge_seconds, _, merged = timed(["/usr/bin/time", "-f", "%M", torchscope, "advise", "--from-facts", facts,
                                      "-o", os.path.join(options.folder, "merged.txt")])
    merge_kib = int(merged.stderr.strip().splitlines()[-1])
    print(f"map step alone: median {statistics.median(map_seconds) * 1e3:.0f} ms a store (min "
          f"{min(map_seconds) * 1e3:.0f}, max {max(map_seconds) * 1e3:.0f}, {len(map_seconds)} stores); facts "
          f"{facts_bytes / len(stores) / 1024:.1f} KiB a store uncompressed; merge of all {len(stores)}: "
          f"{merge_seconds:.1f} s, peak {merge_kib / 1024:.0f} MiB")

    for workers in options.workers:
        output = os.path.join(options.folder, f"dask{workers}.txt")
        seconds, cpu, done = timed([torchscope, "advise", "--dask", "--dask-workers", str(workers), folder,
                                    "-o", output])
        if done.returncode != 0:
            sys.exit(done.stderr)
        mapped = re.search(r"on \d+ Dask workers in ([\d.]+) s; ([\d.]+) KiB", done.stderr)
        driver = re.search(r"peak memory ([\d.]+) MiB", done.stderr)
        same = open(output).read() == open(os.path.join(options.folder, "merged.txt")).read()
        print(f"{workers} worker(s): {seconds:.1f} s wall ({seconds / len(stores) * 1e3:.1f} ms a rank), map phase "
              f"{mapped.group(1)} s, CPU of the process tree {cpu:.1f} s; {mapped.group(2)} KiB moved a rank; "
              f"client peak {driver.group(1)} MiB; report {'the same as' if same else 'DIFFERENT from'} the merge's")


if __name__ == "__main__":
    main()
