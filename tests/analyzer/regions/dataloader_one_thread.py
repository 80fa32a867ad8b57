# A compiled model on one thread (torch.set_num_threads(1)), fed by a DataLoader of 2 worker processes, for one
# epoch of STEPS batches (argv[1], default 24). The region (a chain of pointwise ops, which Inductor fuses into
# one loop) runs faster compiled, but a short run cannot repay its compile time. It is called twice a step,
# so that the calls whose CPU time the collector reads (every 8th of a step's, the first included) are not all of
# them. Prints the parity value torchscope fix compares.
import sys

import torch
from torch.utils.data import DataLoader, Dataset

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 24
width, batch = 256, 256
torch.set_num_threads(1)
torch.manual_seed(0)


class Samples(Dataset):
    def __len__(self):
        return steps * batch

    def __getitem__(self, index):
        x = torch.randn(width, generator=torch.Generator().manual_seed(index))
        return x, x.sum().unsqueeze(0)


def activation(x):
    for _ in range(10):
        x = torch.tanh(x * 1.01 + 0.1)
    return x


def main():
    compiled = torch.compile(activation)  # MARK:model
    layer, head = torch.nn.Linear(width, width), torch.nn.Linear(width, 1)
    optimizer = torch.optim.SGD([*layer.parameters(), *head.parameters()], lr=1e-3)
    for x, y in DataLoader(Samples(), batch_size=batch, num_workers=2):
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(head(compiled(compiled(layer(x)))), y)  # MARK:call
        loss.backward()
        optimizer.step()
    print(f"parity loss={loss.item():.6f}")


if __name__ == "__main__":
    main()
