"""Image classification with a small residual CNN, as a first scoring script is often written: the model in eval
mode, called on 120 batches of 16 images, each call timed by the script, with autograd left on (no torch.no_grad()
nor torch.inference_mode()) and the default NCHW layout.

With CNN_NO_GRAD=1 the loop runs under torch.no_grad(), as the advice asks."""

import os
import time

import torch
from torch import nn


class SmallResNet(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU())
        self.block = nn.Sequential(nn.Conv2d(32, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
                                   nn.Conv2d(32, 32, 3, padding=1), nn.BatchNorm2d(32))
        self.down = nn.Sequential(nn.Conv2d(32, 64, 3, stride=2, padding=1), nn.BatchNorm2d(64), nn.ReLU())
        self.head = nn.Linear(64, classes)

    def forward(self, images):
        features = self.stem(images)
        features = torch.relu(features + self.block(features))
        features = self.down(features)
        return self.head(features.mean(dim=(2, 3)))


def score(model, batches):
    latencies = []
    for images in batches:
        start = time.perf_counter()
        scores = model(images)
        latencies.append(time.perf_counter() - start)
        scores.argmax(dim=1)
    return sorted(latencies)


def main():
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = SmallResNet().eval()
    batches = [torch.randn(16, 3, 48, 48) for _ in range(120)]
    if os.environ.get("CNN_NO_GRAD") == "1":
        with torch.no_grad():
            latencies = score(model, batches)
    else:
        latencies = score(model, batches)
    print(f"median request {latencies[len(latencies) // 2] * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
