# A job that would run for 100,000 steps (hours with its compiles and logging): `fix --steps N` must end
# every run after the warm-up and N steps, with the job's own exit path (its finally block, its atexit
# handler and the file it writes) intact. Batches of three sizes under dynamic=False: shape recompiles.
import atexit
import sys

import torch

atexit.register(lambda: print("atexit: done", flush=True))
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
compiled = torch.compile(model, dynamic=False)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
steps = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
with open("progress.txt", "w", encoding="utf-8") as progress:
    try:
        for step in range(steps):
            x = torch.randn(8 + step % 3, 16)
            loss = compiled(x).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            print(f"step {step} loss={loss.item():.6f}")
            progress.write(f"{step}\n")
    finally:
        progress.write("finally\n")
        print("finally: closed", flush=True)
