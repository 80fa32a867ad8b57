"""Review scoring with a transformer-encoder sentiment model, written as such scripts often are: the model is put in
eval mode, but the loop runs with autograd on (no torch.no_grad()), and the layers are built sequence-first (the
nn.TransformerEncoderLayer default) when REVIEWS_SEQ_FIRST=1. Either keeps torch off the encoder's fused kernel;
REVIEWS_INFERENCE_MODE=1 scores under torch.inference_mode(), as it should be.

Prints the mean positive score, so that a fix that changes the answers shows."""

import os

import torch
from torch import nn


class Sentiment(nn.Module):
    def __init__(self, vocab=2000, width=64, heads=4, layers=3, seq_first=False):
        super().__init__()
        self.seq_first = seq_first
        self.embed = nn.Embedding(vocab, width)
        layer = nn.TransformerEncoderLayer(width, heads, dim_feedforward=128, batch_first=not seq_first)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(width, 2)

    def forward(self, tokens):
        hidden = self.embed(tokens)
        if self.seq_first:
            hidden = self.encoder(hidden.transpose(0, 1)).transpose(0, 1)
        else:
            hidden = self.encoder(hidden)
        return self.head(hidden.mean(dim=1)).softmax(dim=-1)


def main():
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = Sentiment(seq_first=os.environ.get("REVIEWS_SEQ_FIRST") == "1").eval()
    reviews = [torch.randint(0, 2000, (8, 48)) for _ in range(150)]
    positive = []
    with torch.inference_mode(os.environ.get("REVIEWS_INFERENCE_MODE") == "1"):
        for tokens in reviews:
            scores = model(tokens)
            positive.append(scores[:, 1].mean().item())
    print(f"scored {len(reviews) * 8} reviews, mean positive {sum(positive) / len(positive):.6f}")


if __name__ == "__main__":
    main()
