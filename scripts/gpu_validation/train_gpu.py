"""A small, deterministic CUDA training loop for the GPU checks (docs/gpu-validation.md).

Runs --warmup steps, then --steps measured steps between two torch.cuda.synchronize() calls, and
writes one JSON object to --out: the measured window on CLOCK_MONOTONIC (the store's time base),
the median step time and, with --profile TRACE, the kernel/memcpy/memset counts that
torch.profiler recorded for the measured steps (the trace itself is written to TRACE).
Exit codes: 0 done, 77 no CUDA device.
"""
import argparse
import json
import statistics
import sys
import time

import torch


def build_model():
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 32, 3, padding=1), torch.nn.ReLU(),
        torch.nn.Conv2d(32, 64, 3, padding=1), torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(4), torch.nn.Flatten(),
        torch.nn.Linear(64 * 16, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))


def kineto_counts(trace_path):
    with open(trace_path) as f:
        events = json.load(f).get("traceEvents", [])
    counts = {"kernels": 0, "memcpys": 0, "memsets": 0}
    for event in events:
        category = event.get("cat", "")
        if event.get("ph") != "X":
            continue
        if category == "kernel":
            counts["kernels"] += 1
        elif category == "gpu_memcpy":
            counts["memcpys"] += 1
        elif category == "gpu_memset":
            counts["memsets"] += 1
    return counts


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--profile", metavar="TRACE", help="record the measured steps with torch.profiler")
    parser.add_argument("--out", required=True, help="JSON result file")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("train_gpu: no CUDA device", file=sys.stderr)
        return 77

    torch.manual_seed(0)
    device = torch.device("cuda")
    model = build_model().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    # Pageable host batches copied every step, and a loss.item() sync: what typical loops do.
    images = torch.randn(args.batch, 3, 32, 32)
    labels = torch.randint(0, 10, (args.batch,))

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(model(images.to(device)), labels.to(device))
        loss.backward()
        optimizer.step()
        return loss.item()

    for _ in range(args.warmup):
        step()
    torch.cuda.synchronize()

    profiler = None
    if args.profile:
        activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
        profiler = torch.profiler.profile(activities=activities)
        profiler.__enter__()
    step_ms = []
    window_start_ns = time.monotonic_ns()
    for _ in range(args.steps):
        started = time.perf_counter()
        step()
        step_ms.append((time.perf_counter() - started) * 1e3)
    torch.cuda.synchronize()
    window_end_ns = time.monotonic_ns()
    result = {
        "steps": args.steps,
        "median_step_ms": statistics.median(step_ms),
        "window_start_ns": window_start_ns,
        "window_end_ns": window_end_ns,
        "device": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
    }
    if profiler is not None:
        profiler.__exit__(None, None, None)
        profiler.export_chrome_trace(args.profile)
        result["profiler_counts"] = kineto_counts(args.profile)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
