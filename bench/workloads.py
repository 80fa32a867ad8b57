"""What the collector's overhead benches share: their job, an eager MLP training loop (256-512-512-10, batch 64, SGD,
one intra-op thread, built in the worker process so that its import of torch is part of what a bench measures; or
the "large" one, 512-1024-1024-10, batch 128, with steps about eight times longer; or "request", an inference job
of 2 ms requests: 512-1024-1024-10, batch 48, forward only under torch.no_grad()), and how they read the CPU time of the job's threads and of the collector's (named torchscope-wr, -mem, -smp)."""

import os

THREAD_GROUPS = ("job", "torchscope-wr", "torchscope-mem", "torchscope-smp", "other")


def _task_cpu_seconds(task):
    """A thread's CPU seconds: schedstat's nanoseconds where the kernel has them (stat's 10 ms clock ticks are too
    coarse for a thread that runs a few microseconds at a time)."""
    try:
        with open(f"/proc/self/task/{task}/schedstat") as schedstat:
            return int(schedstat.read().split()[0]) / 1e9
    except (OSError, ValueError, IndexError):
        with open(f"/proc/self/task/{task}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def thread_cpu():
    """{group: CPU seconds so far} of this process's threads: the main thread ("job"), each collector thread by its
    name, the rest ("other")."""
    main = os.getpid()
    totals = dict.fromkeys(THREAD_GROUPS, 0.0)
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/comm") as comm:
                name = comm.read().strip()
            seconds = _task_cpu_seconds(task)
        except (OSError, ValueError, IndexError):
            continue  # the thread ended
        group = "job" if int(task) == main else name if name in totals else "other"
        totals[group] += seconds
    return totals


MLP_SIZES = {"bench": ((256, 512, 512, 10), 64), "large": ((512, 1024, 1024, 10), 128),
             "request": ((512, 1024, 1024, 10), 48)}  # widths, batch
INFERENCE_MODELS = ("request",)  # run forward only: each call of the model is a request (docs/collector.md)


def eager_mlp(size="bench"):
    """(model, optimizer, inputs, targets) of the MLP job (MLP_SIZES[size])."""
    import torch

    widths, batch = MLP_SIZES[size]
    torch.manual_seed(0)
    torch.set_num_threads(1)
    layers = []
    for width_in, width_out in zip(widths, widths[1:]):
        layers += [torch.nn.Linear(width_in, width_out), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers[:-1])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    return model, optimizer, torch.randn(batch, widths[0]), torch.randint(0, widths[-1], (batch,))


def eager_mlp_loop(size="bench"):
    """train(steps): runs that many training steps of the one model, optimizer and batch (MLP_SIZES[size])."""
    import torch

    model, optimizer, inputs, targets = eager_mlp(size)

    def train(steps):
        for _ in range(steps):
            optimizer.zero_grad(set_to_none=True)
            torch.nn.functional.cross_entropy(model(inputs), targets).backward()
            optimizer.step()

    return train


def inference_mlp_loop(size="request"):
    """serve(requests): that many calls of the model on the one batch under torch.no_grad(), the job's requests (no
    backward, no optimizer: the collector's bridge marks each call of the outermost module as a request)."""
    import torch

    model, _, inputs, _ = eager_mlp(size)
    model.eval()

    def serve(requests):
        with torch.no_grad():
            for _ in range(requests):
                model(inputs)

    return serve


def job_loop(size):
    """run(steps) of the job MLP_SIZES[size] names: training steps, or requests for INFERENCE_MODELS."""
    return inference_mlp_loop(size) if size in INFERENCE_MODELS else eager_mlp_loop(size)


def pure_python_loop():
    """train(steps): steps of pure Python (about 1 ms of math.sin each), a torchscope step marked after each when the
    collector runs: a thread that holds the GIL all along, as a data-loading or tokenising loop does."""
    import math

    try:
        import torchscope

        mark = torchscope.step
    except ImportError:
        def mark():
            pass

    def train(steps):
        total = 0.0
        for step in range(steps):
            for i in range(5000):
                total += math.sin(step + i)
            mark()
        return total

    return train
