"""A deterministic generator of an H&M-like relational database (customer, article, transactions).

The shapes follow the Kaggle data (see the sample's README): categorical codes with missing values, a numeric age,
article taxonomy codes, and a transaction table with a day, a price and a sales channel. Purchases are heavy-tailed
(log-normal shopping rates, Zipf article popularity, multi-item baskets) and customers stop buying at a hidden churn
day that depends on their club status, so the churn task has a learnable signal.
"""

from dataclasses import dataclass

import torch

from .scales import Scale

MISSING = 0  # categorical code 0 means "missing" in every categorical column

# Cardinalities of the categorical columns (code 0 = missing included).
CUSTOMER_CATEGORIES = {"FN": 2, "Active": 2, "club_member_status": 4, "fashion_news_frequency": 4,
                       "postal_code": 64}
ARTICLE_CATEGORIES = {"product_type_no": 40, "product_group_name": 12, "colour_group_code": 24,
                      "department_no": 60, "index_group_no": 6, "garment_group_no": 20}
TRANSACTION_CATEGORIES = {"sales_channel_id": 3}


@dataclass
class Table:
    categorical: torch.Tensor  # [rows, columns] int64 codes
    numeric: torch.Tensor  # [rows, columns] float32, NaN where missing
    categorical_names: tuple[str, ...]
    numeric_names: tuple[str, ...]

    @property
    def cardinalities(self) -> tuple[int, ...]:
        return tuple(int(self.categorical[:, i].max()) + 1 for i in range(self.categorical.size(1)))


@dataclass
class Database:
    customer: Table
    article: Table
    transactions: Table
    customer_id: torch.Tensor  # transactions' foreign key into customer
    article_id: torch.Tensor  # transactions' foreign key into article
    t_dat: torch.Tensor  # transaction day, 0 .. days-1
    days: int


def _categorical(generator: torch.Generator, rows: int, cardinality: int, missing_rate: float,
                 skew: float = 1.0) -> torch.Tensor:
    """Codes 1..cardinality-1 with a Zipf-like skew, and `missing_rate` of them set to MISSING."""
    weights = 1.0 / torch.arange(1, cardinality, dtype=torch.float64).pow(skew)
    codes = torch.multinomial(weights, rows, replacement=True, generator=generator) + 1
    missing = torch.rand(rows, generator=generator) < missing_rate
    return codes.masked_fill(missing, MISSING)


def _customers(generator: torch.Generator, scale: Scale) -> tuple[Table, torch.Tensor, torch.Tensor]:
    rows = scale.customers
    columns = [_categorical(generator, rows, cardinality, missing_rate=0.3 if name in ("FN", "Active") else 0.02)
               for name, cardinality in CUSTOMER_CATEGORIES.items()]
    # Gamma(2)-shaped ages from two exponentials, so that the generator alone decides them.
    uniforms = torch.rand(2, rows, generator=generator).clamp(min=1e-6)
    age = (18.0 - 12.0 * uniforms.log().sum(dim=0)).clamp(max=90.0)
    age = age.masked_fill(torch.rand(rows, generator=generator) < 0.01, float("nan"))
    # Members who left the club (code 3) or never completed sign-up (code 2) churn sooner.
    status = columns[2]
    mean_lifetime = torch.full((rows,), 1.5 * scale.days)
    mean_lifetime = torch.where(status == 3, 0.2 * scale.days, mean_lifetime)
    mean_lifetime = torch.where(status == 2, 0.6 * scale.days, mean_lifetime)
    join_day = (torch.rand(rows, generator=generator) * 1.2 - 0.4) * scale.days
    lifetime = -mean_lifetime * torch.rand(rows, generator=generator).clamp(min=1e-6).log()
    churn_day = join_day + lifetime
    # Heavy-tailed shopping rates: most customers rarely shop, a few very often; young ones a little more.
    log_rate = torch.randn(rows, generator=generator) * 0.9 + torch.log(torch.tensor(scale.sessions_per_month / 30))
    # Newsletter readers shop more often: codes 1..3 are NONE, Monthly, Regularly.
    news_factor = torch.tensor([1.0, 0.6, 1.3, 2.2])[columns[3]]
    rate = log_rate.exp() * news_factor * torch.where(age < 30, 1.4, 1.0)
    table = Table(torch.stack(columns, dim=1), age.unsqueeze(1).float(),
                  tuple(CUSTOMER_CATEGORIES), ("age",))
    return table, torch.stack([join_day.clamp(min=0), churn_day.clamp(max=scale.days)], dim=1), rate


def _articles(generator: torch.Generator, scale: Scale) -> tuple[Table, torch.Tensor, torch.Tensor]:
    rows = scale.articles
    columns = [_categorical(generator, rows, cardinality, missing_rate=0.0, skew=0.8)
               for cardinality in ARTICLE_CATEGORIES.values()]
    base_price = (torch.randn(rows, generator=generator) * 0.6 - 3.8).exp()  # H&M prices are scaled to ~0.03
    popularity = 1.0 / torch.randperm(rows, generator=generator).add(1).double().pow(0.8)
    table = Table(torch.stack(columns, dim=1), base_price.unsqueeze(1).float(), tuple(ARTICLE_CATEGORIES),
                  ("base_price",))
    return table, base_price, popularity


def generate_database(scale: Scale, seed: int) -> Database:
    """Builds every table from `seed` alone: the same seed and scale give the same database."""
    generator = torch.Generator().manual_seed(seed)
    customer, active_window, rate = _customers(generator, scale)
    article, base_price, popularity = _articles(generator, scale)

    active_days = (active_window[:, 1] - active_window[:, 0]).clamp(min=0)
    sessions_per_customer = torch.poisson(rate * active_days, generator=generator).long()
    session_customer = torch.repeat_interleave(torch.arange(scale.customers), sessions_per_customer)
    start, length = active_window[session_customer, 0], active_days[session_customer]
    session_day = (start + torch.rand(session_customer.numel(), generator=generator) * length).long()
    session_day = session_day.clamp(max=scale.days - 1)
    basket_size = 1 + torch.poisson(torch.full((session_customer.numel(),), 1.4), generator=generator).long()

    customer_id = torch.repeat_interleave(session_customer, basket_size)
    t_dat = torch.repeat_interleave(session_day, basket_size)
    article_id = torch.multinomial(popularity, customer_id.numel(), replacement=True, generator=generator)
    price = base_price[article_id] * (1.0 - 0.3 * (torch.rand(customer_id.numel(), generator=generator) < 0.2))
    channel = 1 + (torch.rand(customer_id.numel(), generator=generator) < 0.7).long()

    order = torch.argsort(t_dat * scale.customers + customer_id)  # stored by day like the Kaggle file
    transactions = Table(channel[order].unsqueeze(1), price[order].unsqueeze(1).float(),
                         tuple(TRANSACTION_CATEGORIES), ("price",))
    return Database(customer, article, transactions, customer_id[order], article_id[order], t_dat[order],
                    scale.days)
