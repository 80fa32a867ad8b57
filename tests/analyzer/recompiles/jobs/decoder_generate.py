"""A tiny decoder (no transformers) generating greedily from prompts of several lengths with a compiled forward,
as Hugging Face's generate() does: a KV cache whose flag switches between the prompt's pass and the token steps,
and prompts of a new length that reach the entries compiled for the token steps."""
import os

import torch
from torch import nn

BACKEND = os.environ.get("TORCHSCOPE_TEST_BACKEND", "eager")
VOCAB, WIDTH, LAYERS = 96, 64, 2


class KVCache:
    def __init__(self):
        self.filled = False
        self.keys = [None] * LAYERS
        self.values = [None] * LAYERS


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(WIDTH, 3 * WIDTH)
        self.out = nn.Linear(WIDTH, WIDTH)

    def forward(self, h, cache, index):
        q, k, v = self.qkv(h).chunk(3, dim=-1)
        if cache.filled:
            k = torch.cat([cache.keys[index], k], dim=1)
            v = torch.cat([cache.values[index], v], dim=1)
        cache.keys[index], cache.values[index] = k, v
        attention = torch.softmax(q @ k.transpose(1, 2) / WIDTH**0.5, dim=-1)
        return h + self.out(attention @ v)


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, WIDTH)
        self.layers = nn.ModuleList(Layer() for _ in range(LAYERS))
        self.head = nn.Linear(WIDTH, VOCAB)

    def forward(self, ids, cache):
        h = self.embed(ids)
        for index, layer in enumerate(self.layers):
            h = layer(h, cache, index)
        cache.filled = True
        return self.head(h[:, -1])


def generate(model, prompt, new_tokens):
    cache = KVCache()
    ids = prompt
    for _ in range(new_tokens):
        logits = model(ids, cache)  # MARK:call
        ids = logits.argmax(dim=-1, keepdim=True)
    return ids


def main():
    torch.manual_seed(0)
    model = Decoder().eval()
    model.forward = torch.compile(model.forward, backend=BACKEND)  # MARK:compile
    with torch.no_grad():
        for length in (5, 8, 11):
            generate(model, torch.randint(0, VOCAB, (2, length)), 4)
    print("generated")


if __name__ == "__main__":
    main()
