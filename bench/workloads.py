"""What the collector's overhead benches share: their job, an eager MLP training loop (256-512-512-10, batch 64, SGD,
one intra-op thread, built in the worker process so that its import of torch is part of what a bench measures), and
how they read the CPU time of the job's threads and of the collector's (named torchscope-wr, -mem, -smp)."""

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


def eager_mlp_loop():
    """train(steps): runs that many training steps of the one model, optimizer and batch."""
    import torch

    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512),
                                torch.nn.ReLU(), torch.nn.Linear(512, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    inputs, targets = torch.randn(64, 256), torch.randint(0, 10, (64,))

    def train(steps):
        for _ in range(steps):
            optimizer.zero_grad(set_to_none=True)
            torch.nn.functional.cross_entropy(model(inputs), targets).backward()
            optimizer.step()

    return train


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
