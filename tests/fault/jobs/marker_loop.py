# Marks a step every few milliseconds and prints its index and CLOCK_MONOTONIC time, until killed
# or until the count given as argv[1] is reached. Never imports torch.
import sys
import time

import torchscope

limit = int(sys.argv[1]) if len(sys.argv) > 1 else -1
index = 0
while index != limit:
    torchscope.step()
    print(index, time.monotonic_ns(), flush=True)
    index += 1
    time.sleep(0.002)
sys.exit(int(sys.argv[2]) if len(sys.argv) > 2 else 0)
