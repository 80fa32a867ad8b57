"""Batch scoring with a small transformer-encoder classifier, as a scoring script is written: the model is built,
put in eval mode, and scored on 200 batches under torch.no_grad(), each call timed by the script itself.

With SCORING_TIMES=FILE the per-call times (ns) are written there as JSON; with SCORING_WAIT_MS=N the loop waits N ms
for its next batch between calls (a serving loop waiting for input)."""

import json
import os
import time

import torch
from torch import nn


class Classifier(nn.Module):
    def __init__(self, vocab=1000, d_model=64, heads=4, layers=4, classes=10):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        layer = nn.TransformerEncoderLayer(d_model, heads, dim_feedforward=128, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.head = nn.Linear(d_model, classes)

    def forward(self, tokens):
        hidden = self.encoder(self.embed(tokens))
        return self.head(hidden.mean(dim=1))


def main():
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = Classifier().eval()
    batches = [torch.randint(0, 1000, (16, 32)) for _ in range(200)]
    wait_s = float(os.environ.get("SCORING_WAIT_MS", "0")) / 1e3
    times = []
    predictions = []
    with torch.no_grad():
        for tokens in batches:
            if wait_s:
                time.sleep(wait_s)
            start = time.perf_counter_ns()
            scores = model(tokens)
            times.append(time.perf_counter_ns() - start)
            predictions.append(scores.argmax(dim=1))
    print(f"scored {sum(len(p) for p in predictions)} rows, median {sorted(times)[len(times) // 2] / 1e6:.3f} ms")
    if os.environ.get("SCORING_TIMES"):
        with open(os.environ["SCORING_TIMES"], "w") as out:
            json.dump(times, out)


if __name__ == "__main__":
    main()
