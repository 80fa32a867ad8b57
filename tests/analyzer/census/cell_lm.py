"""An eager LSTM language model unrolled over time with nn.LSTMCell and trained with a manual SGD update (no
optimizer: steps from backward()): hundreds of small ops per step. Usage: cell_lm.py [STEPS [TIME_STEPS]]."""

import sys

import torch
import torch.nn as nn


class CellLM(nn.Module):
    def __init__(self, ntoken, nhid):
        super().__init__()
        self.encoder = nn.Embedding(ntoken, nhid)
        self.cell = nn.LSTMCell(nhid, nhid)
        self.decoder = nn.Linear(nhid, ntoken)

    def forward(self, tokens, state):
        outputs = []
        for emb in self.encoder(tokens):
            state = self.cell(emb, state)
            outputs.append(state[0])
        return self.decoder(torch.stack(outputs)).flatten(0, 1), state


def main(steps, bptt):
    torch.manual_seed(0)
    ntokens, batch, nhid = 200, 4, 16
    data = torch.randint(0, ntokens, (bptt * steps + 1, batch))
    model = CellLM(ntokens, nhid)
    state = (torch.zeros(batch, nhid), torch.zeros(batch, nhid))
    for i in range(0, steps * bptt, bptt):
        x, y = data[i:i + bptt], data[i + 1:i + 1 + bptt].reshape(-1)
        state = tuple(s.detach() for s in state)
        model.zero_grad()
        output, state = model(x, state)  # MARK:model
        loss = nn.functional.cross_entropy(output, y)
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                p.add_(p.grad, alpha=-0.5)
    print(f"loss {loss.item():.4f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 30, int(sys.argv[2]) if len(sys.argv) > 2 else 16)
