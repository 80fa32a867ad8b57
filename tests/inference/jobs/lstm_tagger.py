"""Tagging sentences with a bidirectional LSTM, as a tagging script is written: the model is built, put in eval
mode, and run on 150 batches of token ids under torch.no_grad(); the predicted tags are collected."""

import torch
from torch import nn


class Tagger(nn.Module):
    def __init__(self, vocab=5000, embedding=64, hidden=128, tags=17):
        super().__init__()
        self.embed = nn.Embedding(vocab, embedding)
        self.lstm = nn.LSTM(embedding, hidden, batch_first=True, bidirectional=True)
        self.classify = nn.Linear(2 * hidden, tags)

    def forward(self, tokens):
        states, _ = self.lstm(self.embed(tokens))
        return self.classify(states)


def main():
    torch.manual_seed(0)
    torch.set_num_threads(1)
    tagger = Tagger().eval()
    sentences = [torch.randint(0, 5000, (32, 24)) for _ in range(150)]
    tagged = 0
    with torch.no_grad():
        for tokens in sentences:
            tags = tagger(tokens).argmax(dim=-1)
            tagged += tags.numel()
    print(f"tagged {tagged} tokens")


if __name__ == "__main__":
    main()
