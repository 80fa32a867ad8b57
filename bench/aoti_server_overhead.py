#!/usr/bin/env python3
"""What the collector's libtorch plugin costs a C++ server of an AOTInductor package (samples/aoti_server): the
server alone against the server with the collector preloaded, interleaved (paired.py), on batch-1 requests, the
smallest a server makes and so the largest share for the plugin's fixed cost per request (a redirected call, two
clock reads, a step record). Reported: the server's own p50 per request (its wall time around building the input
and run()), the sum of its request times, and the CPU time of the process tree (loading the package included).

    .venv/bin/python bench/aoti_server_overhead.py --build build/dev [--repetitions 7] [--requests 3000]
"""

import argparse
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import paired  # noqa: E402

_ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(_ROOT, "build", "dev"))
    parser.add_argument("--repetitions", type=int, default=7)
    parser.add_argument("--requests", type=int, default=3000)
    args = parser.parse_args()
    server = os.path.join(args.build, "bin", "aoti_server")
    collector = os.path.join(args.build, "lib", "libtorchscope_collector.so")
    with tempfile.TemporaryDirectory() as folder:
        package = os.path.join(folder, "ranker.pt2")
        subprocess.run([sys.executable, os.path.join(_ROOT, "samples", "aoti_server", "export_ranker.py"), package],
                       check=True, capture_output=True)
        command = [server, package, "--requests", str(args.requests), "--batch-sizes", "1"]

        def run(variant):
            env = dict(os.environ, OMP_NUM_THREADS="1")
            if variant == "torchscope":
                store = os.path.join(folder, "run.db")
                for suffix in ("", "-wal", "-shm"):
                    if os.path.exists(store + suffix):
                        os.remove(store + suffix)
                env.update(LD_PRELOAD=collector, TORCHSCOPE_OUTPUT=store)
            out, cpu_s = paired.run_child(command, env)
            return {**paired.last_json(out), "cpu_s": cpu_s}

        runs = paired.interleaved(["alone", "torchscope"], args.repetitions, run)
    print(f"{args.repetitions} repetitions of {args.requests} batch-1 requests, OMP_NUM_THREADS=1")
    for key, unit, scale in (("p50_ms", "us", 1e3), ("total_ms", "ms", 1.0), ("cpu_s", "s", 1.0)):
        for variant in ("alone", "torchscope"):
            median, low, high = paired.spread(run[key] * scale for run in runs[variant])
            print(f"  {key:9} {variant:11} median {median:9.3f} {unit} [{low:.3f}, {high:.3f}]")
        ratio = paired.spread(paired.paired_ratios(runs["torchscope"], runs["alone"], key))
        print(f"  {key:9} ratio       median {ratio[0]:9.3f}    [{ratio[1]:.3f}, {ratio[2]:.3f}]")


if __name__ == "__main__":
    main()
