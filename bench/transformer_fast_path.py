#!/usr/bin/env python3
"""What the transformer encoder's fast path (torch._transformer_encoder_layer_fwd) saves on this machine's CPU: the
basis of inference/transformer-fast-path's impact estimate (kFastPathGain, analyzer/src/rules/Inference.cpp).

For each encoder shape, the same weights run three ways, in ABAB rounds (so that a drift of the machine reaches every
way alike): batch-first under torch.inference_mode() (the fast path), sequence-first under inference_mode (torch's
reason "self_attn.batch_first was not True": the layer op by op) and batch-first with autograd on (its reason "grad is
enabled ..."). A round's figure is the median of --calls calls; printed per shape: the median over --rounds rounds
of each way's time and the share of the layer-by-layer time the fast path saves, with the rounds' range.

    .venv/bin/python bench/transformer_fast_path.py [--rounds 5] [--calls 20] [--threads 1]
"""

import argparse
import platform
import statistics
import time

import torch
from torch import nn

# (width, heads, feed-forward, layers, batch, sequence): small scoring models up to a BERT-base-sized layer.
SHAPES = [(64, 4, 128, 3, 8, 48), (128, 8, 512, 4, 16, 64), (256, 8, 1024, 4, 16, 64), (512, 8, 2048, 6, 8, 128),
          (768, 12, 3072, 2, 1, 128)]


def encoder(batch_first, width, heads, feed_forward, layers):
    layer = nn.TransformerEncoderLayer(width, heads, dim_feedforward=feed_forward, batch_first=batch_first)
    return nn.TransformerEncoder(layer, layers, enable_nested_tensor=False).eval()


def median_call(call, calls):
    times = []
    for _ in range(calls):
        start = time.perf_counter_ns()
        call()
        times.append(time.perf_counter_ns() - start)
    return statistics.median(times) / 1e6


def measure(shape, rounds, calls):
    width, heads, feed_forward, layers, batch, sequence = shape
    fast = encoder(True, width, heads, feed_forward, layers)
    seq_first = encoder(False, width, heads, feed_forward, layers)
    seq_first.load_state_dict(fast.state_dict())
    tokens = torch.randn(batch, sequence, width)
    tokens_seq_first = tokens.transpose(0, 1).contiguous()

    def run_inference(model, inputs):
        with torch.inference_mode():
            model(inputs)

    ways = {"fast path": lambda: run_inference(fast, tokens),
            "sequence-first": lambda: run_inference(seq_first, tokens_seq_first),
            "autograd on": lambda: fast(tokens)}
    for call in ways.values():
        median_call(call, 3)  # warm-up
    figures = {name: [] for name in ways}
    for _ in range(rounds):
        for name, call in ways.items():
            figures[name].append(median_call(call, calls))
    return figures


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(args.threads)
    print(f"{platform.processor() or platform.machine()}, torch {torch.__version__}, {args.threads} thread(s), "
          f"{args.rounds} rounds of {args.calls} calls")
    for shape in SHAPES:
        figures = measure(shape, args.rounds, args.calls)
        fast = figures["fast path"]
        line = "d{} h{} ff{} L{} batch {}x{}: fast path {:.2f} ms".format(*shape, statistics.median(fast))
        for name in ("sequence-first", "autograd on"):
            saved = [1 - f / other for f, other in zip(fast, figures[name])]
            line += "; {} {:.2f} ms, saves {:.0%} [{:.0%}, {:.0%}]".format(
                name, statistics.median(figures[name]), statistics.median(saved), min(saved), max(saved))
        print(line, flush=True)


if __name__ == "__main__":
    main()
