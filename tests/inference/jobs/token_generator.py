"""Generating text token by token with a small transformer language model, as the PyTorch examples' generate.py does:
sequence-first encoder layers under a causal mask, in eval mode under torch.no_grad(), each call fed the whole text so
far, so that every request is longer than the one before."""

import math

import torch
from torch import nn


class LanguageModel(nn.Module):
    def __init__(self, vocab=4000, width=96, heads=2, layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(width, heads, 192), layers,
                                             enable_nested_tensor=False)
        self.decoder = nn.Linear(width, vocab)
        self.width = width

    def forward(self, tokens):
        mask = torch.log(torch.tril(torch.ones(len(tokens), len(tokens))))
        hidden = self.encoder(self.embed(tokens) * math.sqrt(self.width), mask=mask)
        return self.decoder(hidden).log_softmax(dim=-1)


def main():
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = LanguageModel().eval()
    text = torch.randint(0, 4000, (1, 1))
    with torch.no_grad():
        for _ in range(120):
            scores = model(text)
            word = torch.multinomial(scores[-1].squeeze().exp(), 1)
            text = torch.cat([text, word.view(1, 1)], 0)
    print(f"generated {len(text) - 1} tokens")


if __name__ == "__main__":
    main()
