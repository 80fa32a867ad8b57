# The stack sampler's GIL bias: the main thread computes in pure Python for about 2 ms (compute, MARK:compute), then
# sleeps 3 ms, over and over, marking a step every 10 rounds. A sampler that must take the GIL sees it only at the
# sleep, where it lets the GIL go; one that reads without the GIL sees compute() for its true share of the time, which
# the job measures itself and prints as `compute share <fraction>`.
import math
import sys
import time

import torchscope

seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0


def compute(until):
    total = 0.0
    while time.perf_counter() < until:
        for i in range(64):
            total += math.sin(i)  # MARK:compute
    return total


computing = 0.0
rounds = 0
start = time.perf_counter()
while time.perf_counter() - start < seconds:
    began = time.perf_counter()
    compute(began + 0.002)
    computing += time.perf_counter() - began
    time.sleep(0.003)  # MARK:sleep
    rounds += 1
    if rounds % 10 == 0:
        torchscope.step()
print(f"compute share {computing / (time.perf_counter() - start):.4f}")
