# An eager LSTM language model trained with a manual SGD update and no optimizer object, in the style of the PyTorch
# examples' word_language_model, on a generated token stream: the steps are found from backward() calls.
import sys

import torch
from torch import nn

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 30
torch.manual_seed(0)
torch.set_num_threads(1)
VOCAB, BPTT, BATCH = 1000, 35, 20


class RNNModel(nn.Module):
    def __init__(self, vocab=VOCAB, embedding=128, hidden=128, layers=2):
        super().__init__()
        self.encoder = nn.Embedding(vocab, embedding)
        self.rnn = nn.LSTM(embedding, hidden, layers)
        self.decoder = nn.Linear(hidden, vocab)

    def forward(self, tokens, state):
        output, state = self.rnn(self.encoder(tokens), state)
        return self.decoder(output), state


def repackage(state):
    return tuple(tensor.detach() for tensor in state)


model = RNNModel()
data = torch.randint(0, VOCAB, (steps * BPTT + 1, BATCH))
state = (torch.zeros(2, BATCH, 128), torch.zeros(2, BATCH, 128))
lr = 20.0
for step in range(steps):
    tokens, targets = data[step * BPTT:(step + 1) * BPTT], data[step * BPTT + 1:(step + 1) * BPTT + 1]
    state = repackage(state)
    model.zero_grad()
    output, state = model(tokens, state)
    loss = nn.functional.cross_entropy(output.view(-1, VOCAB), targets.reshape(-1))
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 0.25)
    for parameter in model.parameters():
        parameter.data.add_(parameter.grad, alpha=-lr)
print(f"loss={loss.item():.4f}")
