# Produces data/profile_memory.json.gz, a PyTorch profiler (Kineto) trace with memory events from a real
# CPU run (torch 2.13): 3 steps of a Linear layer's forward and backward under profile_memory=True.
#   python profile_memory.py /tmp/trace.json && gzip -9 -c /tmp/trace.json > profile_memory.json.gz
import sys

import torch

torch.manual_seed(0)
model = torch.nn.Linear(256, 256)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                            profile_memory=True) as profiler:
    for _ in range(3):
        loss = model(torch.randn(64, 256)).square().mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        profiler.step()
profiler.export_chrome_trace(sys.argv[1])
