"""Trains a small causal transformer language model on sequences from a synthetic Markov chain.

Run from the repository root:  python -m samples.transformer.train [--scale tiny|small|large] [--tuned]

As written (default): attention by hand (matmul, mask, softmax, matmul), inference under plain `model.eval()`, fp32
linear layers at inference. `--tuned`: `F.scaled_dot_product_attention`, `torch.inference_mode()`, and on a CPU
int8 dynamic quantization of the linear layers for the inference pass.
"""

import contextlib
import copy
import math
import time
import warnings
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from samples.common.arguments import parse_sample_arguments


@dataclass(frozen=True)
class Scale:
    vocabulary: int
    sequence: int
    sequences: int
    width: int
    layers: int
    heads: int
    epochs: int
    batch_size: int


SCALES = {
    "tiny": Scale(vocabulary=32, sequence=32, sequences=512, width=32, layers=2, heads=2, epochs=2, batch_size=32),
    "small": Scale(vocabulary=64, sequence=64, sequences=2_048, width=64, layers=2, heads=4, epochs=2, batch_size=64),
    "large": Scale(vocabulary=512, sequence=256, sequences=32_768, width=256, layers=6, heads=8, epochs=3,
                   batch_size=64),
}


def markov_sequences(scale: Scale, seed: int) -> torch.Tensor:
    """Token sequences whose next token depends on the current one through a peaked random transition table."""
    generator = torch.Generator().manual_seed(seed)
    transitions = torch.softmax(4.0 * torch.randn(scale.vocabulary, scale.vocabulary, generator=generator), dim=1)
    tokens = torch.empty(scale.sequences, scale.sequence, dtype=torch.long)
    tokens[:, 0] = torch.randint(0, scale.vocabulary, (scale.sequences,), generator=generator)
    for position in range(1, scale.sequence):
        tokens[:, position] = torch.multinomial(transitions[tokens[:, position - 1]], 1, generator=generator)[:, 0]
    return tokens


class CausalSelfAttention(nn.Module):
    def __init__(self, width: int, heads: int, fused: bool):
        super().__init__()
        self.heads, self.fused = heads, fused
        self.qkv = nn.Linear(width, 3 * width)
        self.out = nn.Linear(width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, length, width = x.shape
        q, k, v = self.qkv(x).view(batch, length, 3, self.heads, width // self.heads).permute(2, 0, 3, 1, 4)
        if self.fused:
            attended = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
            mask = torch.triu(torch.ones(length, length, dtype=torch.bool, device=x.device), diagonal=1)
            attended = torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1) @ v
        return self.out(attended.transpose(1, 2).reshape(batch, length, width))


class Block(nn.Module):
    def __init__(self, width: int, heads: int, fused: bool):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.attention = CausalSelfAttention(width, heads, fused)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attention(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class TinyLM(nn.Module):
    def __init__(self, scale: Scale, fused: bool):
        super().__init__()
        self.tokens = nn.Embedding(scale.vocabulary, scale.width)
        self.positions = nn.Parameter(torch.zeros(scale.sequence, scale.width))
        self.blocks = nn.Sequential(*(Block(scale.width, scale.heads, fused) for _ in range(scale.layers)))
        self.norm = nn.LayerNorm(scale.width)
        self.head = nn.Linear(scale.width, scale.vocabulary)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.tokens(tokens) + self.positions[: tokens.size(1)]
        return self.head(self.norm(self.blocks(x)))


def quantized_for_inference(model: nn.Module) -> nn.Module:
    """int8 dynamic quantization of the linear layers (CPU only).

    torch 2.13 marks torch.ao's eager quantization deprecated in favour of torchao's `quantize_`; it still works, and
    its deprecation notices are silenced here so that the sample's output stays readable.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.ao.quantization.quantize_dynamic(copy.deepcopy(model), {nn.Linear}, dtype=torch.qint8)


def evaluate(model: nn.Module, tokens: torch.Tensor, scale: Scale, device, tuned: bool) -> tuple[float, float, float]:
    """Validation loss, next-token accuracy and seconds spent."""
    model.eval()
    started = time.perf_counter()
    loss_sum = torch.zeros((), device=device)
    correct = torch.zeros((), dtype=torch.long, device=device)
    with torch.inference_mode() if tuned else contextlib.nullcontext():
        for start in range(0, tokens.size(0), scale.batch_size):
            batch = tokens[start:start + scale.batch_size].to(device)
            logits = model(batch[:, :-1])
            loss_sum += F.cross_entropy(logits.transpose(1, 2), batch[:, 1:], reduction="sum").detach()
            correct += (logits.argmax(dim=-1) == batch[:, 1:]).sum()
    predictions = tokens.size(0) * (tokens.size(1) - 1)
    return (loss_sum / predictions).item(), correct.item() / predictions, time.perf_counter() - started


def main(argv: list[str] | None = None) -> float:
    arguments = parse_sample_arguments(argv, "transformer", __doc__.splitlines()[0], SCALES,
                                       "SDPA, inference_mode, int8 dynamic quantization")
    scale, device, tuned = SCALES[arguments.scale], torch.device(arguments.device), arguments.tuned
    started = time.perf_counter()
    tokens = markov_sequences(scale, arguments.seed)
    split = scale.sequences * 4 // 5
    torch.manual_seed(arguments.seed)
    model = TinyLM(scale, fused=tuned).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    variant = "tuned" if tuned else "baseline"
    print(f"transformer: scale={arguments.scale} seed={arguments.seed} variant={variant} device={device} "
          f"sequences={scale.sequences}", flush=True)
    for epoch in range(1, scale.epochs + 1):
        model.train()
        order = torch.randperm(split, generator=torch.Generator().manual_seed(arguments.seed * 1000 + epoch))
        loss_sum = torch.zeros((), device=device)
        for start in range(0, split, scale.batch_size):
            batch = tokens[order[start:start + scale.batch_size]].to(device)
            optimizer.zero_grad()
            loss = F.cross_entropy(model(batch[:, :-1]).transpose(1, 2), batch[:, 1:])
            loss.backward()
            optimizer.step()
            loss_sum += loss.detach() * batch.size(0)
        inference_model = quantized_for_inference(model) if tuned and device.type == "cpu" else model
        loss, accuracy, seconds = evaluate(inference_model, tokens[split:], scale, device, tuned)
        print(f"epoch {epoch} train_loss={(loss_sum / split).item():.4f} validation_loss={loss:.4f} "
              f"validation_accuracy={accuracy:.4f} inference_seconds={seconds:.3f}", flush=True)
    print(f"final variant={variant} validation_loss={loss:.4f} validation_accuracy={accuracy:.4f} "
          f"seconds={time.perf_counter() - started:.1f}", flush=True)
    return accuracy


if __name__ == "__main__":
    main()
