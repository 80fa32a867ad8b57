"""A small CNN trained on images that a per-sample Python transform augments (a random brightness curve, flip and
crop), the batch stacked in one line of the loop.

Lines timed: the batch line (a comprehension calling the transform, then torch.stack), the transform's Python
curve and its lookup, the forward and loss, backward and the optimizer's step.
"""
import argparse
import os
import random
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import truth  # noqa: E402


def augment(image, rng):
    """One image's random brightness curve, flip and 28x28 crop."""
    start = truth.clock()
    gamma = rng.uniform(0.7, 1.3)
    curve = [min(1.0, (level / 255) ** gamma * 1.1) for level in range(256)]  # truth: curve self
    truth.span("curve", start)
    start = truth.clock()
    image = torch.tensor(curve)[(image * 255).long()]  # truth: apply_curve self
    truth.span("apply_curve", start)
    if rng.random() < 0.5:
        image = image.flip(-1)
    top, left = rng.randrange(5), rng.randrange(5)
    return image[:, top:top + 28, left:left + 28]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=200)
    args = parser.parse_args()
    torch.manual_seed(0)
    rng = random.Random(0)
    images = torch.rand(512, 1, 32, 32)
    labels = torch.randint(0, 10, (512,))
    model = torch.nn.Sequential(torch.nn.Conv2d(1, 16, 3), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
                                torch.nn.Conv2d(16, 32, 3), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
                                torch.nn.Flatten(), torch.nn.Linear(32 * 5 * 5, 10))
    loss_fn = torch.nn.CrossEntropyLoss()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(args.steps):
        picks = [rng.randrange(len(images)) for _ in range(32)]
        start = truth.clock()
        batch = torch.stack([augment(images[i], rng) for i in picks])  # truth: augment_batch total
        truth.span("augment_batch", start)
        start = truth.clock()
        loss = loss_fn(model(batch), labels[picks])  # truth: forward self
        truth.span("forward", start)
        opt.zero_grad()
        start = truth.clock()
        loss.backward()  # truth: backward self
        truth.span("backward", start)
        start = truth.clock()
        opt.step()  # truth: optimizer self
        truth.span("optimizer", start)
        truth.step()


if __name__ == "__main__":
    main()
