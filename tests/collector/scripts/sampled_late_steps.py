# Steps that start late: a second of set-up in pure Python, then 150 steps of 10 ms marked with torchscope.step().
# Sampled three times a second, the first sample inside the steps follows one taken in the set-up: none of the time
# between may count as the steps'.
import math
import time

import torchscope


def compute(seconds):
    until = time.perf_counter() + seconds
    total = 0.0
    while time.perf_counter() < until:
        for i in range(64):
            total += math.sin(i)
    return total


compute(1.0)  # set-up
torchscope.step()  # step 0 starts here
for _ in range(150):
    compute(0.01)
    torchscope.step()
print("done")
