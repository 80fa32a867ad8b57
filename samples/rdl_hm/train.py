"""Trains the churn GNN on a generated H&M-like database and prints per-epoch and final validation metrics.

Run from the repository root:  python -m samples.rdl_hm.train [--scale tiny|small|medium|large] [--tuned]
"""

import argparse
import sys
import time

import torch

from . import baseline, tuned
from .experiment import EpochResult, prepare
from .scales import SCALES


def parse_arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m samples.rdl_hm.train", description=__doc__.splitlines()[0])
    parser.add_argument("--scale", choices=SCALES, default="small",
                        help="database and model size (default: small, 1-2 CPU-minutes)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the data, the model and the batch order")
    parser.add_argument("--tuned", action="store_true", help="run the variant written for torch.compile")
    parser.add_argument("--epochs", type=int, help="override the scale's number of epochs")
    parser.add_argument("--device", default="cpu", help="torch device, e.g. cpu or cuda (default: cpu)")
    arguments = parser.parse_args(argv)
    if arguments.epochs is not None and arguments.epochs < 1:
        parser.error("--epochs must be at least 1")
    return arguments


def print_epoch(result: EpochResult) -> None:
    print(f"epoch {result.epoch} train_loss={result.train_loss:.4f} validation_loss={result.validation_loss:.4f} "
          f"validation_auroc={result.validation_auroc:.4f} seconds={result.seconds:.1f}", flush=True)


def main(argv: list[str] | None = None) -> list[EpochResult]:
    arguments = parse_arguments(argv)
    started = time.perf_counter()
    device = torch.device(arguments.device)
    experiment = prepare(SCALES[arguments.scale], arguments.seed, device, arguments.epochs)
    variant = "tuned" if arguments.tuned else "baseline"
    print(f"rdl_hm user-churn: scale={arguments.scale} seed={arguments.seed} variant={variant} device={device} "
          f"transactions={experiment.sampler.transaction_by_key.numel()} "
          f"train_seeds={experiment.train.customer.numel()} validation_seeds={experiment.validation.customer.numel()}",
          flush=True)
    results = (tuned if arguments.tuned else baseline).train(experiment, print_epoch)
    last = results[-1]
    print(f"final variant={variant} train_loss={last.train_loss:.4f} validation_loss={last.validation_loss:.4f} "
          f"validation_auroc={last.validation_auroc:.4f} seconds={time.perf_counter() - started:.1f}", flush=True)
    return results


if __name__ == "__main__":
    main(sys.argv[1:])
