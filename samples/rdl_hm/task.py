"""The RelBench `user-churn` task: a customer active in the last week churns if they buy nothing in the next week."""

from dataclasses import dataclass

import torch

from .database import Database

WEEK = 7


@dataclass
class SeedTable:
    customer: torch.Tensor  # [seeds] customer row
    time: torch.Tensor  # [seeds] seed day: only transactions strictly before it may be seen
    churned: torch.Tensor  # [seeds] float label, 1.0 = no purchase in [time, time + 7)


def _churn_at(db: Database, seed_day: int) -> SeedTable:
    customers = db.customer.categorical.size(0)
    last_week = (db.t_dat >= seed_day - WEEK) & (db.t_dat < seed_day)
    next_week = (db.t_dat >= seed_day) & (db.t_dat < seed_day + WEEK)
    active = torch.zeros(customers, dtype=torch.bool)
    active[db.customer_id[last_week]] = True
    buys_again = torch.zeros(customers, dtype=torch.bool)
    buys_again[db.customer_id[next_week]] = True
    seeds = active.nonzero().squeeze(1)
    return SeedTable(seeds, torch.full_like(seeds, seed_day), (~buys_again[seeds]).float())


def _concat(tables: list[SeedTable]) -> SeedTable:
    return SeedTable(*(torch.cat([getattr(t, name) for t in tables]) for name in ("customer", "time", "churned")))


def churn_splits(db: Database, train_weeks: int) -> tuple[SeedTable, SeedTable]:
    """Training seeds at weekly days before validation, validation at the last day whose next week is known.

    The labels of the latest training week end where validation starts, so no label leaks into training.
    """
    validation_day = db.days - WEEK
    train_days = [validation_day - WEEK * week for week in range(train_weeks, 0, -1)]
    return _concat([_churn_at(db, day) for day in train_days]), _churn_at(db, validation_day)
