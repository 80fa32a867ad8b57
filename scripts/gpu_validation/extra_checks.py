"""The GPU checks that are not counts (docs/gpu-validation.md, "Also on the GPU"), one result file.

  extra_checks.py --collector LIB --cuda-syncs BIN [--python PYTHON] --out DIR

Each check runs a job under the collector and says what it found:
  injection     CUDA_INJECTION64_PATH instead of LD_PRELOAD: the driver loads the collector at cuInit, and the
                store has the counts cuda_syncs printed for itself (compare_counts.py program, as check 1)
  profiler      a job that starts torch.profiler itself (CUDA activities): its output and exit code unchanged (its
                profiler sees the kernels), one line saying that GPU tracing was handed over to it at the job's
                line, the Python side (steps) still recorded
  dataloader    a DataLoader with 4 forked workers feeding a CUDA model: the job ends, every store opens
  sigterm       SIGTERM in the middle of a training loop: the job dies by it (143), the store is closed and
                holds the kernels of the steps before it
Writes DIR/extra.json ({"check": {"passed": bool, ...}}) and exits 1 when any check failed.
"""
import argparse
import glob
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

PROFILER_JOB = """
import torch
from torch.profiler import ProfilerActivity, profile
model = torch.nn.Linear(256, 256).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
    for _ in range(10):
        optimizer.zero_grad()
        loss = model(torch.ones(64, 256, device="cuda")).square().mean()
        loss.backward()
        optimizer.step()
torch.cuda.synchronize()
kernels = sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)
print("profiler saw kernels:", kernels > 0, "loss", round(loss.item(), 4))
"""

DATALOADER_JOB = """
import torch
from torch.utils.data import DataLoader, TensorDataset
data = TensorDataset(torch.randn(2048, 64), torch.randn(2048, 1))
loader = DataLoader(data, batch_size=64, num_workers=4, shuffle=False)
model = torch.nn.Linear(64, 1).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for epoch in range(2):
    for x, y in loader:
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())
        loss.backward()
        optimizer.step()
print("done", round(loss.item(), 4))
"""


def stores(directory):
    return sorted(glob.glob(os.path.join(directory, "*.db")))


def query(path, sql):
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as connection:
        return connection.execute(sql).fetchone()


def traced_env(collector, directory, preload=True):
    env = dict(os.environ, TORCHSCOPE_OUTPUT=os.path.join(directory, "run.db"))
    if preload:
        env["LD_PRELOAD"] = collector
    return env


def plain_env():
    return {name: value for name, value in os.environ.items()
            if not name.startswith("TORCHSCOPE_") and name not in ("LD_PRELOAD", "CUDA_INJECTION64_PATH")}


def check_injection(args, directory):
    expected = os.path.join(directory, "expected.json")
    env = traced_env(args.collector, directory, preload=False)
    env["CUDA_INJECTION64_PATH"] = args.collector
    job = subprocess.run([args.cuda_syncs, "--iterations", "5", "--counts-json", expected], env=env,
                         capture_output=True, text=True, timeout=300)
    result = os.path.join(directory, "result.json")
    compared = subprocess.run([args.python, os.path.join(HERE, "compare_counts.py"), "program", "--store-dir",
                               directory, "--expected", expected, "--out", result], capture_output=True, text=True,
                              timeout=120)
    counts = json.load(open(result)) if os.path.exists(result) else {}
    return {"passed": job.returncode == 0 and compared.returncode == 0, "exit_code": job.returncode,
            "counts": counts.get("counts"), "checks": counts.get("checks"),
            "stderr": (job.stderr + compared.stderr)[-600:]}


def check_profiler(args, directory):
    plain = subprocess.run([args.python, "-c", PROFILER_JOB], env=plain_env(), capture_output=True, text=True,
                           timeout=300)
    traced = subprocess.run([args.python, "-c", PROFILER_JOB], env=traced_env(args.collector, directory),
                            capture_output=True, text=True, timeout=300)
    handed_over = [line for line in traced.stderr.splitlines() if "GPU tracing stopped" in line]
    diagnostics = [row[0] for path in stores(directory)
                   for row in [query(path, "SELECT group_concat(message, ' | ') FROM diagnostics")] if row[0]]
    steps = sum(query(path, "SELECT count(*) FROM steps")[0] for path in stores(directory))
    return {"passed": traced.returncode == plain.returncode == 0 and traced.stdout == plain.stdout
            and len(handed_over) == 1 and "torch.profiler at " in handed_over[0] and steps > 0,
            "exit_codes": [plain.returncode, traced.returncode], "stdout_equal": traced.stdout == plain.stdout,
            "stdout": [plain.stdout, traced.stdout], "handover_lines": handed_over, "diagnostics": diagnostics,
            "steps": steps, "stderr": traced.stderr[-600:]}


def check_dataloader(args, directory):
    started = time.monotonic()
    job = subprocess.run([args.python, "-c", DATALOADER_JOB], env=traced_env(args.collector, directory),
                         capture_output=True, text=True, timeout=300)
    opened = []
    for path in stores(directory):
        try:
            opened.append(query(path, "PRAGMA integrity_check")[0] == "ok")
        except sqlite3.Error:
            opened.append(False)
    kernels = sum(query(path, "SELECT count(*) FROM kernels")[0] for path in stores(directory))
    return {"passed": job.returncode == 0 and bool(opened) and all(opened) and kernels > 0,
            "exit_code": job.returncode, "stores": len(opened), "stores_ok": sum(opened), "kernels": kernels,
            "seconds": round(time.monotonic() - started, 1), "stderr": job.stderr[-600:]}


def check_sigterm(args, directory):
    job = subprocess.Popen([args.python, os.path.join(HERE, "train_gpu.py"), "--steps", "1000000",
                            "--out", os.path.join(directory, "never.json")],
                           env=traced_env(args.collector, directory), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    time.sleep(args.sigterm_after)
    job.send_signal(signal.SIGTERM)
    _, stderr = job.communicate(timeout=60)
    store = os.path.join(directory, "run.db")
    closed = kernels = None
    if os.path.exists(store):
        closed = query(store, "SELECT end_ns FROM run")[0] != -1
        kernels = query(store, "SELECT count(*) FROM kernels")[0]
    return {"passed": job.returncode in (-signal.SIGTERM, 128 + signal.SIGTERM) and bool(closed) and bool(kernels),
            "exit_code": job.returncode, "store_closed": closed, "kernels": kernels, "stderr": stderr[-600:]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collector", required=True)
    parser.add_argument("--cuda-syncs", required=True)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--sigterm-after", type=float, default=15, help="seconds before the SIGTERM")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    checks = {"injection": check_injection, "profiler": check_profiler, "dataloader": check_dataloader,
              "sigterm": check_sigterm}
    results = {}
    for name, check in checks.items():
        directory = os.path.join(args.out, name)
        os.makedirs(directory, exist_ok=True)
        try:
            results[name] = check(args, directory)
        except Exception as error:  # a check that breaks is a failed check, the others still run
            results[name] = {"passed": False, "error": f"{type(error).__name__}: {error}"}
        print(f"{name}: {'passed' if results[name]['passed'] else 'FAILED'}", flush=True)
    with open(os.path.join(args.out, "extra.json"), "w") as sink:
        json.dump(results, sink, indent=2)
    return 0 if all(result["passed"] for result in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
