"""A scorer serving two kinds of calls in turn, as a service that answers single lookups between bulk batches does:
one item, then 512, then one, ... (an MLP under torch.inference_mode()). Consecutive requests differ 100-fold in
their work, so that figures of one request credited to its neighbour show."""

import torch
from torch import nn


def main():
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = nn.Sequential(nn.Linear(256, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 10))
    model.eval()
    single, bulk = torch.randn(1, 256), torch.randn(512, 256)
    served = 0
    with torch.inference_mode():
        for call in range(60):
            scores = model(bulk if call % 2 else single)
            served += len(scores)
    print(f"served {served} items")


if __name__ == "__main__":
    main()
