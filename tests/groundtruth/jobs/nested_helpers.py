"""A model of the job's own (its forward in this file) trained on features that three nested helpers prepare:
prepare() draws a batch and calls featurize(), which expands it and calls normalize().

Lines timed: each helper's call line (the callee holds the time) and the lines that do the work at each level, the
model's call line and its forward's lines, backward and the optimizer's step.
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import truth  # noqa: E402


class Net(torch.nn.Module):
    def __init__(self, width):
        super().__init__()
        self.hidden = torch.nn.Linear(width, 384)
        self.out = torch.nn.Linear(384, 1)

    def forward(self, x):
        start = truth.clock()
        h = torch.nn.functional.gelu(self.hidden(x))  # truth: hidden self
        truth.span("hidden", start)
        start = truth.clock()
        y = self.out(h).squeeze(1)  # truth: head self
        truth.span("head", start)
        return y


def normalize(features):
    start = truth.clock()
    centred = features - features.mean(0)  # truth: centre self
    truth.span("centre", start)
    start = truth.clock()
    scaled = centred / (centred.std(0) + 1e-5)  # truth: scale self
    truth.span("scale", start)
    return scaled


def featurize(raw):
    start = truth.clock()
    expanded = torch.cat([raw, raw.pow(2), raw.sin(), raw.cos(), torch.sigmoid(raw)], 1)  # truth: expand self
    truth.span("expand", start)
    start = truth.clock()
    features = normalize(expanded)  # truth: featurize_normalize total
    truth.span("featurize_normalize", start)
    return features


def prepare(generator, rows, width):
    start = truth.clock()
    raw = torch.randn(rows, width, generator=generator)  # truth: draw self
    truth.span("draw", start)
    start = truth.clock()
    features = featurize(raw)  # truth: prepare_featurize total
    truth.span("prepare_featurize", start)
    return features, raw.sum(1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=300)
    args = parser.parse_args()
    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(0)
    model = Net(5 * 64)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for _ in range(args.steps):
        start = truth.clock()
        x, target = prepare(generator, 512, 64)  # truth: prepare total
        truth.span("prepare", start)
        start = truth.clock()
        prediction = model(x)  # truth: model total
        truth.span("model", start)
        loss = torch.nn.functional.mse_loss(prediction, target)
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
