# Prints the collector's threads alive while a second of steps runs (torchscope.step() markers, no torch needed).
import os
import time

import torchscope


def thread_names():
    names = []
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/comm") as comm:
                names.append(comm.read().strip())
        except OSError:
            pass  # the thread ended meanwhile
    return names


for _ in range(60):
    time.sleep(0.02)
    torchscope.step()
print(" ".join(sorted(name for name in thread_names() if name.startswith("torchscope-"))))
