"""Trains a small CNN on synthetic 10-class images and measures inference.

Run from the repository root:  python -m samples.cnn.train [--scale tiny|small|large] [--tuned]

As written (default): NCHW tensors, fp32 everywhere, and inference under plain `model.eval()` with autograd still
recording. `--tuned`: channels_last model and inputs, autocast to half precision on a GPU, `torch.inference_mode()`.
"""

import contextlib
import time
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from samples.common.arguments import parse_sample_arguments

CLASSES = 10


@dataclass(frozen=True)
class Scale:
    images: int
    size: int
    width: int
    epochs: int
    batch_size: int


SCALES = {
    "tiny": Scale(images=1_024, size=16, width=16, epochs=2, batch_size=64),
    "small": Scale(images=4_096, size=32, width=16, epochs=2, batch_size=128),
    "large": Scale(images=65_536, size=64, width=64, epochs=5, batch_size=256),
}


def synthetic_images(scale: Scale, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Each class is a random smooth template; an image is its template, shifted a little, plus noise."""
    generator = torch.Generator().manual_seed(seed)
    coarse = torch.randn(CLASSES, 3, scale.size // 4, scale.size // 4, generator=generator)
    templates = F.interpolate(coarse, size=(scale.size, scale.size), mode="bilinear", align_corners=False)
    labels = torch.randint(0, CLASSES, (scale.images,), generator=generator)
    shifts = torch.randint(-2, 3, (scale.images, 2), generator=generator)
    images = torch.stack([templates[label].roll(tuple(shift.tolist()), dims=(1, 2))
                          for label, shift in zip(labels, shifts)])
    return images + 2.5 * torch.randn(images.shape, generator=generator), labels


class SmallCNN(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        layers = []
        channels = 3
        for multiplier in (1, 2, 4):
            layers += [nn.Conv2d(channels, width * multiplier, 3, padding=1, bias=False),
                       nn.BatchNorm2d(width * multiplier), nn.ReLU(), nn.MaxPool2d(2)]
            channels = width * multiplier
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Linear(channels, CLASSES)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.features(images).mean(dim=(2, 3)))


def main(argv: list[str] | None = None) -> float:
    arguments = parse_sample_arguments(argv, "cnn", __doc__.splitlines()[0], SCALES,
                                       "channels_last, AMP on a GPU, inference_mode")
    scale, device, tuned = SCALES[arguments.scale], torch.device(arguments.device), arguments.tuned
    started = time.perf_counter()
    images, labels = synthetic_images(scale, arguments.seed)
    split = scale.images * 4 // 5
    torch.manual_seed(arguments.seed)
    model = SmallCNN(scale.width).to(device)
    memory_format = torch.channels_last if tuned else torch.contiguous_format
    model = model.to(memory_format=memory_format)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    # Half precision pays off on GPUs; CPUs without bf16 units run autocast slower, so the tuned run keeps fp32 there.
    use_amp = tuned and device.type == "cuda"
    autocast = (lambda: torch.autocast(device.type, dtype=torch.float16)) if use_amp else contextlib.nullcontext
    scaler = torch.amp.GradScaler(device.type, enabled=use_amp)
    print(f"cnn: scale={arguments.scale} seed={arguments.seed} variant={'tuned' if tuned else 'baseline'} "
          f"device={device} images={scale.images}", flush=True)
    for epoch in range(1, scale.epochs + 1):
        model.train()
        order = torch.randperm(split, generator=torch.Generator().manual_seed(arguments.seed * 1000 + epoch))
        loss_sum = torch.zeros((), device=device)
        for start in range(0, split, scale.batch_size):
            index = order[start:start + scale.batch_size]
            batch = images[index].to(device).contiguous(memory_format=memory_format)
            optimizer.zero_grad()
            with autocast():
                loss = F.cross_entropy(model(batch), labels[index].to(device))
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            loss_sum += loss.detach() * index.numel()
        accuracy, inference_seconds = evaluate(model, images[split:], labels[split:], scale, device, tuned, autocast)
        print(f"epoch {epoch} train_loss={(loss_sum / split).item():.4f} validation_accuracy={accuracy:.4f} "
              f"inference_seconds={inference_seconds:.3f}", flush=True)
    print(f"final variant={'tuned' if tuned else 'baseline'} validation_accuracy={accuracy:.4f} "
          f"seconds={time.perf_counter() - started:.1f}", flush=True)
    return accuracy


def evaluate(model, images, labels, scale, device, tuned, autocast) -> tuple[float, float]:
    model.eval()
    started = time.perf_counter()
    correct = torch.zeros((), dtype=torch.long, device=device)
    memory_format = torch.channels_last if tuned else torch.contiguous_format
    with torch.inference_mode() if tuned else contextlib.nullcontext(), autocast():
        for start in range(0, images.size(0), scale.batch_size):
            batch = images[start:start + scale.batch_size].to(device).contiguous(memory_format=memory_format)
            correct += (model(batch).argmax(dim=1) == labels[start:start + scale.batch_size].to(device)).sum()
    return correct.item() / images.size(0), time.perf_counter() - started


if __name__ == "__main__":
    main()
