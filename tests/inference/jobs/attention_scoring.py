"""Batch scoring with a classifier whose multi-head self-attention is written by hand, as many model files write it:
scores = q @ k.transpose(-2, -1) / sqrt(head_dim), the padding masked with -inf, softmax, then @ v. The model is put
in eval mode and scores 80 padded batches under torch.no_grad(), each call timed by the script itself.

With SCORING_TIMES=FILE the per-call times (ns) are written there as JSON."""

import json
import math
import os
import time

import torch
import torch.nn.functional as F
from torch import nn


class SelfAttention(nn.Module):
    def __init__(self, d_model, heads, dropout=0.1):
        super().__init__()
        self.heads = heads
        self.head_dim = d_model // heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, mask):
        batch, length, d_model = x.shape
        q, k, v = self.qkv(x).split(d_model, dim=-1)
        q = q.view(batch, length, self.heads, self.head_dim).transpose(1, 2)
        k = k.view(batch, length, self.heads, self.head_dim).transpose(1, 2)
        v = v.view(batch, length, self.heads, self.head_dim).transpose(1, 2)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(mask == 0, float("-inf"))  # padding takes no attention
        weights = F.softmax(scores, dim=-1)
        out = weights @ v
        out = out.transpose(1, 2).reshape(batch, length, d_model)
        return self.dropout(self.proj(out))


class Block(nn.Module):
    def __init__(self, d_model, heads):
        super().__init__()
        self.attention = SelfAttention(d_model, heads)
        self.norm1 = nn.LayerNorm(d_model)
        self.feed_forward = nn.Sequential(nn.Linear(d_model, 2 * d_model), nn.GELU(), nn.Linear(2 * d_model, d_model))
        self.norm2 = nn.LayerNorm(d_model)

    def forward(self, x, mask):
        x = self.norm1(x + self.attention(x, mask))
        return self.norm2(x + self.feed_forward(x))


class Classifier(nn.Module):
    def __init__(self, vocab=1000, d_model=128, heads=4, layers=3, classes=10):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.blocks = nn.ModuleList(Block(d_model, heads) for _ in range(layers))
        self.head = nn.Linear(d_model, classes)

    def forward(self, tokens):
        mask = (tokens != 0)[:, None, None, :]  # 0 is padding
        hidden = self.embed(tokens)
        for block in self.blocks:
            hidden = block(hidden, mask)
        return self.head(hidden.mean(dim=1))


def padded_batch(generator, batch=16, length=128):
    tokens = torch.randint(1, 1000, (batch, length), generator=generator)
    lengths = torch.randint(length // 2, length + 1, (batch,), generator=generator)
    tokens[torch.arange(length)[None, :] >= lengths[:, None]] = 0
    return tokens


def main():
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = Classifier().eval()
    generator = torch.Generator().manual_seed(1)
    batches = [padded_batch(generator) for _ in range(80)]
    times = []
    predictions = []
    with torch.no_grad():
        for tokens in batches:
            start = time.perf_counter_ns()
            scores = model(tokens)
            times.append(time.perf_counter_ns() - start)
            predictions.append(scores.argmax(dim=1).tolist())
    print(f"scored {sum(len(p) for p in predictions)} rows, median {sorted(times)[len(times) // 2] / 1e6:.3f} ms")
    if os.environ.get("SCORING_TIMES"):
        with open(os.environ["SCORING_TIMES"], "w") as out:
            json.dump(times, out)


if __name__ == "__main__":
    main()
