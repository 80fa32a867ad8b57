"""The options every Python sample accepts: --scale, --seed, --tuned and --device (samples/README.md)."""

import argparse


def parse_sample_arguments(argv: list[str] | None, sample: str, description: str, scales: dict,
                           tuned_help: str) -> argparse.Namespace:
    """`sample` is the package name under samples/; `tuned_help` says what --tuned changes in it."""
    parser = argparse.ArgumentParser(prog=f"python -m samples.{sample}.train", description=description)
    parser.add_argument("--scale", choices=scales, default="small", help="data and model size (default: small)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the data, the model and the batch order")
    parser.add_argument("--tuned", action="store_true", help=tuned_help)
    parser.add_argument("--device", default="cpu", help="torch device, e.g. cpu or cuda (default: cpu)")
    return parser.parse_args(argv)
