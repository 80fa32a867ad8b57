"""What both training variants share: the data, the sampler, the model inputs and the per-epoch record."""

import math
from dataclasses import dataclass

import torch
from torch_geometric.data import HeteroData

from .database import generate_database
from .graph import build_graph
from .model import edge_key
from .sampler import TemporalNeighborSampler
from .scales import Scale
from .task import SeedTable, churn_splits

LEARNING_RATE = 0.01


def cosine_learning_rate(epoch: int, epochs: int) -> float:
    """The learning rate of `CosineAnnealingLR(T_max=epochs, eta_min=0)` after `epoch` scheduler steps."""
    return LEARNING_RATE * (1 + math.cos(math.pi * epoch / epochs)) / 2


@dataclass
class Experiment:
    scale: Scale
    seed: int
    device: torch.device
    epochs: int
    sampler: TemporalNeighborSampler
    train: SeedTable
    validation: SeedTable
    tables: dict

    def train_batches(self, epoch: int):
        return self.sampler.batches(self.train, self.scale.batch_size, shuffle_seed=self.seed * 1000 + epoch)

    def validation_batches(self):
        return self.sampler.batches(self.validation, self.scale.batch_size, shuffle_seed=None)


@dataclass
class EpochResult:
    epoch: int
    train_loss: float
    validation_loss: float
    validation_auroc: float
    seconds: float


def prepare(scale: Scale, seed: int, device: torch.device, epochs: int | None = None) -> Experiment:
    db = generate_database(scale, seed)
    train, validation = churn_splits(db, scale.train_weeks)
    tables = {"customer": db.customer, "article": db.article, "transactions": db.transactions}
    sampler = TemporalNeighborSampler(build_graph(db), scale.fanout)
    return Experiment(scale, seed, device, epochs or scale.epochs, sampler, train, validation, tables)


def model_inputs(batch: HeteroData, device: torch.device, string_keys: bool) -> tuple:
    """The model's arguments from a sampled subgraph: feature dicts per node type, edges per edge type."""
    batch = batch.to(device)
    edge_index = batch.edge_index_dict
    if string_keys:
        edge_index = {edge_key(edge_type): value for edge_type, value in edge_index.items()}
    customer = batch["customer"]
    return (batch.x_cat_dict, batch.x_num_dict, edge_index, customer.seed_time, customer.num_sampled,
            batch["transactions"].time)
