"""Language model around the Mamba block of the mambapy package (pure PyTorch selective scan, tiny random config)
trained under torch.compile on token sequences of two lengths, then stepped token by token with its recurrent
cache."""
import os

import torch
import torch.nn.functional as F
from mambapy.mamba import Mamba, MambaConfig

BACKEND = os.environ.get("VALIDATION_BACKEND", "inductor")
VOCAB = 64


class MambaLM(torch.nn.Module):
    def __init__(self, config):
        super().__init__()
        self.embedding = torch.nn.Embedding(VOCAB, config.d_model)
        self.mamba = Mamba(config)
        self.head = torch.nn.Linear(config.d_model, VOCAB)

    def forward(self, tokens):
        return self.head(self.mamba(self.embedding(tokens)))

    def step(self, token, caches):
        x, caches = self.mamba.step(self.embedding(token), caches)
        return self.head(x), caches


def main():
    torch.manual_seed(0)
    config = MambaConfig(d_model=16, n_layers=1, d_state=8)
    model = MambaLM(config)
    compiled = torch.compile(model, backend=BACKEND)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

    model.train()
    for length in (8, 8, 16, 8):
        tokens = torch.randint(0, VOCAB, (2, length + 1))
        logits = compiled(tokens[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), tokens[:, 1:].reshape(-1))
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()

    model.eval()
    step = torch.compile(model.step, backend=BACKEND)
    caches = [(None, torch.zeros(1, config.d_inner, config.d_conv - 1)) for _ in range(config.n_layers)]
    token = torch.zeros(1, dtype=torch.long)
    with torch.no_grad():
        for _ in range(4):
            logits, caches = step(token, caches)
            token = logits.argmax(-1)
    print("last token", int(token))


if __name__ == "__main__":
    main()
