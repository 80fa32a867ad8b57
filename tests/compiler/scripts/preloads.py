# A small eager training job that writes, for each process it runs in, which of the LD_PRELOAD libraries are
# mapped into it (as an allocator the user preloads would be) and its import path (sys.path, where the user's
# PYTHONPATH goes), one JSON line per process in $PRELOADS_OUT.
import json
import os
import sys

import torch

preloaded = [entry for entry in os.environ.get("LD_PRELOAD", "").replace(" ", ":").split(":") if entry]
with open("/proc/self/maps") as maps:
    mapped = {line.split()[-1] for line in maps if line.rstrip().endswith(".so") or ".so." in line}
with open(os.environ["PRELOADS_OUT"], "a") as out:
    out.write(json.dumps({"preloaded": preloaded,
                          "mapped": sorted(os.path.realpath(p) for p in mapped),
                          "sys_path": sys.path}) + "\n")

torch.manual_seed(0)
model = torch.nn.Linear(8, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
x = torch.randn(64, 8)
y = x.sum(dim=1, keepdim=True)
for step in range(4):
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    print(f"step {step} loss={loss.item():.6f}")
