"""`torchscope advise --dask [ADDRESS] RUN_DIR`: the map step on a Dask cluster, the merge on this machine.

One task per store runs the `torchscope` installed on the worker (`torchscope advise --rank-facts STORE`) where the
store lies, a shared file system or the worker's own disk; only the store's rank facts (docs/FORMAT.md, "Rank
facts"), compressed, travel back. This machine then merges them (`torchscope advise --from-facts`) into the report
that `torchscope advise RUN_DIR` would print. A store that cannot be mapped (damaged, another schema version, its
worker died) is named in the report, which says how many ranks it covers, and the others are merged.

Started by `torchscope advise --dask` with torchscope's Python; needs `pip install "torchscope[dask]"` there, and
on the workers the same torchscope release on their PATH. The task functions travel by value, so the workers need
no torchscope Python package, only the command.
"""

import argparse
import os
import re
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import zlib

INSTALL_DASK = 'pip install "torchscope[dask]"'
FACTS_FORMAT = "torchscope-rank-facts"  # analyzer/include/torchscope/analyzer/RankFacts.h
FACTS_VERSION = 1
FACTS_SUFFIX = ".facts.json"
MAP_TIMEOUT_SECONDS = 1800  # one store's map step; a store that takes longer is reported, not waited for
EXIT_FAILURE, EXIT_USAGE = 1, 2


def fail(code, message):
    print(f"torchscope: {message}", file=sys.stderr)
    sys.exit(code)


def release_of(version_line):
    """'torchscope 0.1.0' -> '0.1.0'."""
    return version_line.strip().rpartition(" ")[2]


def rank_in_name(name):
    """The rank in a store's file name (run.rank3.4711.db -> 3), -1 when it has none (store/RunFolder.h)."""
    match = re.search(r"\.rank(\d+)\.", name)
    return int(match.group(1)) if match else -1


# --- on the workers ---------------------------------------------------------------------------------------------

def probe_worker():
    """The worker's host and the torchscope on its PATH, with its release."""
    found = shutil.which("torchscope")
    info = {"host": socket.gethostname(), "torchscope": found, "release": None}
    if found:
        try:
            done = subprocess.run([found, "--version"], capture_output=True, text=True, timeout=60)
            info["release"] = release_of(done.stdout) if done.returncode == 0 else None
        except (OSError, subprocess.SubprocessError):
            pass
    return info


def list_stores(paths):
    """The stores this worker sees: a folder's *.db files by rank, then name; a file as given."""
    stores = []
    for path in paths:
        if os.path.isdir(path):
            names = sorted((name for name in os.listdir(path) if name.endswith(".db")),
                           key=lambda name: (rank_in_name(name), name))
            stores += [os.path.join(path, name) for name in names if os.path.isfile(os.path.join(path, name))]
        elif os.path.isfile(path):
            stores.append(path)
    return stores


def map_store(path, map_arguments):
    """One store's map step with the worker's torchscope: its facts compressed, or the reason it has none."""
    host = socket.gethostname()
    found = shutil.which("torchscope")
    if found is None:
        return {"path": path, "host": host, "error": "no torchscope on this worker's PATH"}
    with tempfile.TemporaryDirectory(prefix="torchscope-map-") as folder:
        output = os.path.join(folder, "store" + FACTS_SUFFIX)
        try:
            done = subprocess.run([found, "advise", "--rank-facts", path, "-o", output, *map_arguments],
                                  capture_output=True, text=True, timeout=MAP_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            return {"path": path, "host": host, "error": f"mapping it took more than {MAP_TIMEOUT_SECONDS} s"}
        if done.returncode != 0:
            lines = [line for line in done.stderr.splitlines() if line.strip()]
            reason = lines[-1] if lines else f"torchscope advise --rank-facts exited with {done.returncode}"
            reason = reason.removeprefix("torchscope: ").removeprefix(path + ": ")
            return {"path": path, "host": host, "error": reason}
        with open(output, "rb") as facts:
            text = facts.read()
    return {"path": path, "host": host, "facts": zlib.compress(text, 6), "bytes": len(text)}


# --- on this machine --------------------------------------------------------------------------------------------

def unanalysed_facts(release, path, host, reason):
    """The facts document of a store that has none (RankFacts.h, unanalysedFacts)."""
    import json
    return json.dumps({"format": FACTS_FORMAT, "version": FACTS_VERSION, "torchscope": release, "store": path,
                       "host": host, "error": reason}, sort_keys=True)


def connect(options, torchscope):
    """The client, and the local cluster it started (None on a scheduler given)."""
    from distributed import Client, LocalCluster
    if options.scheduler:
        try:
            client = Client(options.scheduler, timeout=options.timeout)
        except (OSError, TimeoutError) as error:
            fail(EXIT_FAILURE, f"the Dask scheduler at {options.scheduler} did not answer within {options.timeout:g} s "
                               f"({error}); start one with `dask scheduler` and workers with `dask worker "
                               f"{options.scheduler}`, or leave out the address for a local cluster")
        return client, None
    # The local workers run the same torchscope as this machine.
    os.environ["PATH"] = os.path.dirname(torchscope) + os.pathsep + os.environ.get("PATH", "")
    workers = options.workers or os.cpu_count() or 1
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
    return Client(cluster, timeout=options.timeout), cluster


def usable_workers(client, release, timeout):
    """The workers that have this torchscope release on their PATH; the others are refused with what to install."""
    try:
        client.wait_for_workers(1, timeout=timeout)
    except TimeoutError:
        fail(EXIT_FAILURE, f"no Dask worker joined the scheduler within {timeout:g} s (start them with `dask worker "
                           f"{client.scheduler.address}`)")
    good, refused = [], []
    for address, info in sorted(client.run(probe_worker).items()):
        if info["release"] == release:
            good.append(address)
            continue
        have = ("no torchscope on its PATH" if not info["torchscope"] else
                f"{info['torchscope']} is torchscope {info['release'] or '(did not run)'}")
        refused.append(f"worker {address} on {info['host']}: {have}")
    install = (f"install torchscope {release} in the workers' environment (pip install torchscope=={release}) and "
               f"put its bin/ on their PATH")
    for line in refused:
        print(f"torchscope advise: refused {line}: {install}", file=sys.stderr)
    if not good:
        fail(EXIT_FAILURE, f"no Dask worker has torchscope {release}: {install}")
    return good


def place_stores(client, workers, paths):
    """Each store with the workers that see it: every worker on a shared file system, else those of its host."""
    listed = client.run(list_stores, paths, workers=workers)
    seen_by = {}
    for address in workers:
        for store in listed.get(address, []):
            seen_by.setdefault(store, []).append(address)
    if not seen_by:
        fail(EXIT_USAGE, f"{', '.join(paths)}: no torchscope store (*.db) there on any worker")
    stores = sorted(seen_by, key=lambda path: (rank_in_name(os.path.basename(path)), os.path.basename(path), path))
    return [(store, seen_by[store]) for store in stores]


def map_stores(client, placed, map_arguments, release, facts_folder):
    """Maps every store, writes each one's facts into `facts_folder`; returns what travelled, for the summary."""
    from distributed import as_completed
    futures = {}
    for index, (store, workers) in enumerate(placed):
        future = client.submit(map_store, store, map_arguments, key=f"torchscope-map-{index}", pure=False,
                               workers=workers, allow_other_workers=False)
        futures[future] = (index, store)
    travelled, failed, done = 0, 0, 0
    report_every = max(1, len(placed) // 10)
    for future in as_completed(futures):
        index, store = futures[future]
        try:
            result = future.result()
        except Exception as error:  # a worker that died with the task (KilledWorker), a lost connection
            result = {"path": store, "host": "", "error": f"its worker died while mapping it ({type(error).__name__})"}
        name = f"{index:06d}.{os.path.basename(store)}{FACTS_SUFFIX}"
        with open(os.path.join(facts_folder, name), "wb") as out:
            if "facts" in result:
                travelled += len(result["facts"])
                out.write(zlib.decompress(result["facts"]))
            else:
                failed += 1
                out.write(unanalysed_facts(release, store, result["host"], result["error"]).encode())
        done += 1
        if done == 1 or done % report_every == 0 or done == len(placed):
            print(f"torchscope advise: mapped {done} of {len(placed)} stores", file=sys.stderr, flush=True)
        future.release()
    return travelled, failed


def parse_arguments(argv):
    parser = argparse.ArgumentParser(prog="torchscope advise --dask", description=__doc__.splitlines()[0])
    parser.add_argument("--torchscope", required=True, help="this machine's torchscope, which merges")
    parser.add_argument("--scheduler", help="a running scheduler's address (default: a local cluster)")
    parser.add_argument("--workers", type=int, default=0, help="the local cluster's worker processes")
    parser.add_argument("--timeout", type=float, default=20, help="seconds to wait for the scheduler and a worker")
    parser.add_argument("--format", default="text")
    parser.add_argument("--output", default="")
    parser.add_argument("--user-code", action="append", default=[])
    parser.add_argument("--absolute-paths", action="store_true")
    parser.add_argument("stores", nargs="+")
    return parser.parse_args(argv)


def main(argv=None):
    options = parse_arguments(sys.argv[1:] if argv is None else argv)
    try:
        import distributed  # noqa: F401  (the check: Dask is optional)
    except ImportError:
        fail(EXIT_FAILURE, f"advise --dask needs Dask in {sys.executable}'s environment: {INSTALL_DASK}")
    import cloudpickle
    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the workers need only the torchscope command
    version = subprocess.run([options.torchscope, "--version"], capture_output=True, text=True, check=True).stdout
    release = release_of(version)
    map_arguments = [argument for root in options.user_code for argument in ("--user-code", root)]
    if options.format == "html":
        map_arguments += ["--format", "html"]  # the facts then keep the timeline the HTML report draws
    begin = time.perf_counter()
    client, cluster = connect(options, options.torchscope)
    with tempfile.TemporaryDirectory(prefix="torchscope-facts-") as facts_folder:
        try:
            workers = usable_workers(client, release, options.timeout)
            placed = place_stores(client, workers, options.stores)
            travelled, failed = map_stores(client, placed, map_arguments, release, facts_folder)
        finally:
            client.close()
            if cluster is not None:
                cluster.close()
        mapped_at = time.perf_counter()
        print(f"torchscope advise: mapped {len(placed) - failed} of {len(placed)} stores on {len(workers)} Dask "
              f"workers in {mapped_at - begin:.1f} s; {travelled / max(1, len(placed)) / 1024:.1f} KiB of facts a "
              f"store travelled", file=sys.stderr)
        merge = [options.torchscope, "advise", "--from-facts", facts_folder, "--format", options.format]
        if options.output:
            merge += ["-o", options.output]
        if options.absolute_paths:
            merge.append("--absolute-paths")
        merged = subprocess.run(merge).returncode
        print(f"torchscope advise: merged in {time.perf_counter() - mapped_at:.1f} s; this driver's peak memory "
              f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB", file=sys.stderr)
        return merged


if __name__ == "__main__":
    sys.exit(main())
