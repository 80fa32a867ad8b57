"""Per-table feature encoders, a temporal encoder and a two-layer heterogeneous GraphSAGE for churn.

`tuned=False` is the model as first written (the problems are listed in this sample's README with their lines);
`tuned=True` is the same computation written for torch.compile.
"""

import math

import torch
from torch import nn
from torch_geometric.nn import HeteroConv, SAGEConv

from .database import Table
from .graph import EDGE_TYPES

TIME_FREQUENCIES = (1.0, 1 / 7, 1 / 30, 1 / 90)  # cycles per day


def edge_key(edge_type: tuple[str, str, str]) -> str:
    return "__".join(edge_type)


class TableEncoder(nn.Module):
    """Sum of one embedding per categorical column and a linear map of the standardised numeric columns."""

    def __init__(self, table: Table, channels: int, tuned: bool):
        super().__init__()
        self.tuned = tuned
        # One table of embeddings for all columns: column c's codes start at offsets[c].
        cardinalities = torch.tensor(table.cardinalities)
        self.embedding = nn.Embedding(int(cardinalities.sum()), channels)
        self.register_buffer("offsets", torch.cumsum(cardinalities, 0) - cardinalities)
        self.numeric = nn.Linear(2 * table.numeric.size(1), channels)  # value and missing flag per column
        self.register_buffer("mean", table.numeric.nanmean(dim=0))
        self.register_buffer("std", (table.numeric - table.numeric.nanmean(dim=0)).pow(2).nanmean(dim=0).sqrt())

    def forward(self, x_cat: torch.Tensor, x_num: torch.Tensor) -> torch.Tensor:
        missing = torch.isnan(x_num)
        if self.tuned:
            x_num = torch.where(missing, 0.0, x_num)
        elif missing.any():  # data-dependent branch: a graph break under torch.compile, a sync on a GPU
            x_num = torch.where(missing, 0.0, x_num)
        numeric = torch.cat([(x_num - self.mean) / self.std, missing.float()], dim=1)
        return self.numeric(numeric) + self.embedding(x_cat + self.offsets).sum(dim=1)


class TemporalEncoder(nn.Module):
    """Embeds how many days before its seed customer's seed time each transaction happened."""

    def __init__(self, channels: int, tuned: bool):
        super().__init__()
        self.tuned = tuned
        self.register_buffer("frequencies", torch.tensor(TIME_FREQUENCIES) * 2 * math.pi)
        self.linear = nn.Linear(2 * len(TIME_FREQUENCIES) + 1, channels)

    def forward(self, seed_time: torch.Tensor, num_sampled: torch.Tensor, time: torch.Tensor) -> torch.Tensor:
        if self.tuned:
            seed_time_per_row = seed_time.repeat_interleave(num_sampled, output_size=time.size(0))
        else:
            seed_time_per_row = seed_time.repeat_interleave(num_sampled)  # output size unknown: break and sync
        age_days = (seed_time_per_row - time).float().unsqueeze(1)
        phases = age_days * self.frequencies
        return self.linear(torch.cat([torch.log1p(age_days), phases.sin(), phases.cos()], dim=1))


class StringKeyedHeteroSAGE(nn.Module):
    """HeteroConv(aggr="sum") over SAGEConv, with its convolutions in a ModuleDict keyed by plain strings."""

    def __init__(self, channels: int):
        super().__init__()
        self.convs = nn.ModuleDict({edge_key(edge_type): SAGEConv(channels, channels) for edge_type in EDGE_TYPES})
        self.routes = tuple((edge_key(edge_type), edge_type[0], edge_type[2]) for edge_type in EDGE_TYPES)

    def forward(self, x: dict[str, torch.Tensor], edge_index: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        out: dict[str, torch.Tensor] = {}
        for key, source, destination in self.routes:
            message = self.convs[key]((x[source], x[destination]), edge_index[key])
            out[destination] = out[destination] + message if destination in out else message
        return out


class ChurnGNN(nn.Module):
    def __init__(self, tables: dict[str, Table], channels: int, tuned: bool, layers: int = 2):
        super().__init__()
        self.encoders = nn.ModuleDict({name: TableEncoder(table, channels, tuned) for name, table in tables.items()})
        self.temporal = TemporalEncoder(channels, tuned)
        if tuned:
            self.convs = nn.ModuleList(StringKeyedHeteroSAGE(channels) for _ in range(layers))
        else:
            # PyG's HeteroConv keeps its convolutions in a ModuleDict keyed by edge-type tuples.
            self.convs = nn.ModuleList(
                HeteroConv({edge_type: SAGEConv(channels, channels) for edge_type in EDGE_TYPES}, aggr="sum")
                for _ in range(layers))
        self.head = nn.Sequential(nn.Linear(channels, channels), nn.ReLU(), nn.Linear(channels, 1))

    def forward(self, x_cat: dict[str, torch.Tensor], x_num: dict[str, torch.Tensor], edge_index: dict,
                seed_time: torch.Tensor, num_sampled: torch.Tensor, time: torch.Tensor) -> torch.Tensor:
        """Churn logits of the seed customers (the first rows of the customer nodes)."""
        x = {name: encoder(x_cat[name], x_num[name]) for name, encoder in self.encoders.items()}
        x["transactions"] = x["transactions"] + self.temporal(seed_time, num_sampled, time)
        for conv in self.convs:
            x = {name: value.relu() for name, value in conv(x, edge_index).items()}
        return self.head(x["customer"][: seed_time.size(0)]).squeeze(1)
