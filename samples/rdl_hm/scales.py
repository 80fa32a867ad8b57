"""Sizes of the generated database and of the training run, selected with ``--scale``."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Scale:
    customers: int
    articles: int
    days: int  # length of the transaction history
    sessions_per_month: float  # median shopping sessions of an active customer per 30 days
    fanout: int  # most recent transactions sampled per seed customer
    batch_size: int
    epochs: int
    channels: int
    train_weeks: int  # weekly seed times used for training, ending one week before validation
    layers: int = 2  # message-passing layers of the GNN

    @property
    def model_arguments(self) -> dict[str, int]:
        """The GNN's size, as keyword arguments of `ChurnGNN`."""
        return {"channels": self.channels, "layers": self.layers}


SCALES = {
    # `torchscope demo`: tiny's data with one message-passing layer and two epochs, so that each cold run
    # compiles less while every planted problem still shows.
    "demo": Scale(customers=1_500, articles=300, days=84, sessions_per_month=2.0, fanout=16,
                  batch_size=128, epochs=2, channels=32, train_weeks=3, layers=1),
    # `fix` on steady state: the demo's data, model and compiles, run for 40 epochs (hundreds of steps), so that
    # the steady-state step time weighs against the compile time a fix saves or costs.
    "long": Scale(customers=1_500, articles=300, days=84, sessions_per_month=2.0, fanout=16,
                  batch_size=128, epochs=40, channels=32, train_weeks=3, layers=1),
    # CI size: seconds of eager work, the rest is compilation.
    "tiny": Scale(customers=1_500, articles=300, days=84, sessions_per_month=2.0, fanout=16,
                  batch_size=128, epochs=3, channels=32, train_weeks=3),
    # Default: 70-95 s of CPU time end to end on a 2-core machine, most of it compilation.
    "small": Scale(customers=8_000, articles=2_000, days=140, sessions_per_month=2.0, fanout=24,
                   batch_size=512, epochs=3, channels=64, train_weeks=5),
    "medium": Scale(customers=150_000, articles=20_000, days=365, sessions_per_month=2.0, fanout=64,
                    batch_size=512, epochs=3, channels=128, train_weeks=20),
    # The real H&M table sizes (1.37 M customers, 105 k articles, ~30 M transactions over 2 years): for a GPU.
    "large": Scale(customers=1_370_000, articles=105_000, days=730, sessions_per_month=0.5, fanout=128,
                   batch_size=512, epochs=3, channels=128, train_weeks=52),
}
