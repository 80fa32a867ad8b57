"""A CPU training loop that leaks: every step's output, with its autograd graph, is kept in a list for
"logging" (the marked line). The side-by-side benchmark (memory_bench.py) profiles it with each tool.

    python leaky_job.py [STEPS]
"""

import json
import statistics
import sys
import time

import torch


def main(steps):
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 256))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    inputs, targets = torch.randn(128, 256), torch.randn(128, 256)
    kept_outputs = []
    step_seconds = []
    for _ in range(steps):
        start = time.perf_counter()
        optimizer.zero_grad()
        outputs = model(inputs)
        loss = torch.nn.functional.mse_loss(outputs, targets)
        loss.backward()
        optimizer.step()
        kept_outputs.append(outputs)  # MARK:leak
        step_seconds.append(time.perf_counter() - start)
    print("bench-steps " + json.dumps({"median_step_s": statistics.median(step_seconds[5:])}))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100)
