"""Trains a small gated residual MLP on a synthetic regression task, eagerly, one small op at a time.

Run from the repository root:  python -m samples.eager_loop.train [--scale tiny|small|large] [--tuned]

As written (default): every layer norm, gate and activation is a handful of tiny eager kernels, so the step time is
dominated by per-op dispatch overhead. `--tuned`: the same model under `torch.compile`, which fuses them.
"""

import time
from dataclasses import dataclass

import torch
from torch import nn

from samples.common.arguments import parse_sample_arguments


@dataclass(frozen=True)
class Scale:
    samples: int
    features: int
    width: int
    blocks: int
    steps: int
    batch_size: int


SCALES = {
    "tiny": Scale(samples=2_048, features=16, width=32, blocks=3, steps=60, batch_size=64),
    "small": Scale(samples=16_384, features=32, width=64, blocks=6, steps=400, batch_size=128),
    "large": Scale(samples=262_144, features=64, width=256, blocks=12, steps=4_000, batch_size=512),
}


class GatedBlock(nn.Module):
    """Hand-written layer norm, a SiLU-gated projection and a scaled residual: many small elementwise ops."""

    def __init__(self, width: int):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(width))
        self.shift = nn.Parameter(torch.zeros(width))
        self.value = nn.Linear(width, width)
        self.gate = nn.Linear(width, width)
        self.residual_scale = nn.Parameter(torch.tensor(0.5))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        mean = x.mean(dim=-1, keepdim=True)
        variance = (x - mean).pow(2).mean(dim=-1, keepdim=True)
        normalized = (x - mean) * torch.rsqrt(variance + 1e-5) * self.scale + self.shift
        gated = self.value(normalized) * torch.sigmoid(self.gate(normalized)) * self.gate(normalized)
        return x + self.residual_scale * torch.tanh(gated)


class GatedMLP(nn.Module):
    def __init__(self, scale: Scale):
        super().__init__()
        self.input = nn.Linear(scale.features, scale.width)
        self.blocks = nn.Sequential(*(GatedBlock(scale.width) for _ in range(scale.blocks)))
        self.output = nn.Linear(scale.width, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.output(self.blocks(self.input(x))).squeeze(-1)


def synthetic_regression(scale: Scale, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(scale.samples, scale.features, generator=generator)
    weights = torch.randn(scale.features, generator=generator)
    y = torch.sin(x @ weights / scale.features ** 0.5) + 0.5 * x[:, 0] * x[:, 1]
    return x, y + 0.05 * torch.randn(scale.samples, generator=generator)


def main(argv: list[str] | None = None) -> float:
    arguments = parse_sample_arguments(argv, "eager_loop", __doc__.splitlines()[0], SCALES,
                                       "compile the model with torch.compile")
    scale, device, tuned = SCALES[arguments.scale], torch.device(arguments.device), arguments.tuned
    started = time.perf_counter()
    x, y = synthetic_regression(scale, arguments.seed)
    split = scale.samples * 4 // 5
    torch.manual_seed(arguments.seed)
    model = GatedMLP(scale).to(device)
    forward = torch.compile(model) if tuned else model
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    batches = torch.randint(0, split // scale.batch_size, (scale.steps,),
                            generator=torch.Generator().manual_seed(arguments.seed + 1))
    variant = "tuned" if tuned else "baseline"
    print(f"eager_loop: scale={arguments.scale} seed={arguments.seed} variant={variant} device={device} "
          f"steps={scale.steps}", flush=True)
    loss_sum = torch.zeros((), device=device)
    report_every = max(1, scale.steps // 4)
    window_started = time.perf_counter()
    for step, batch in enumerate(batches.tolist(), start=1):
        rows = slice(batch * scale.batch_size, (batch + 1) * scale.batch_size)
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(forward(x[rows].to(device)), y[rows].to(device))
        loss.backward()
        optimizer.step()
        loss_sum += loss.detach()
        if step % report_every == 0:
            print(f"step {step} train_loss={(loss_sum / report_every).item():.4f} "
                  f"ms_per_step={1000 * (time.perf_counter() - window_started) / report_every:.2f}", flush=True)
            loss_sum.zero_()
            window_started = time.perf_counter()
    model.eval()
    with torch.no_grad():
        validation_loss = torch.nn.functional.mse_loss(forward(x[split:].to(device)), y[split:].to(device)).item()
    print(f"final variant={variant} validation_loss={validation_loss:.4f} seconds={time.perf_counter() - started:.1f}",
          flush=True)
    return validation_loss


if __name__ == "__main__":
    main()
