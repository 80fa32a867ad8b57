"""Time-aware neighbour sampling into mini-batch subgraphs, written in PyTorch.

PyG's `NeighborLoader` needs `pyg-lib` or `torch-sparse` for any sampling (and `pyg-lib` for temporal sampling); this
sampler does what `NeighborLoader(time_attr="time", temporal_strategy="last", disjoint=True)` does for the churn
task's two hops: each seed customer gets its own subgraph with its most recent `fanout` transactions strictly before
the seed time, and the article of each of them. Subgraph sizes therefore change from batch to batch.
"""

from collections.abc import Iterator

import torch
from torch_geometric.data import HeteroData

from .graph import FROM_ARTICLE, FROM_CUSTOMER, TO_ARTICLE, TO_CUSTOMER
from .task import SeedTable


class TemporalNeighborSampler:
    def __init__(self, data: HeteroData, fanout: int):
        self.data = data
        self.fanout = fanout
        customer, transaction = data[FROM_CUSTOMER].edge_index
        time = data["transactions"].time
        horizon = int(time.max()) + 1
        # Edges sorted by (customer, time): a customer's history before a day is a contiguous run ending at a
        # position that one binary search over the combined key finds.
        self.sort_key, order = torch.sort(customer * horizon + time[transaction])
        self.horizon = horizon
        self.transaction_by_key = transaction[order]
        self.article_of_transaction = data[TO_ARTICLE].edge_index[1][torch.argsort(data[TO_ARTICLE].edge_index[0])]
        counts = torch.bincount(customer, minlength=data["customer"].num_nodes)
        self.row_start = torch.cumsum(counts, 0) - counts

    def sample(self, seeds: SeedTable) -> HeteroData:
        end = torch.searchsorted(self.sort_key, seeds.customer * self.horizon + seeds.time)
        taken = (end - self.row_start[seeds.customer]).clamp(max=self.fanout)
        seed_of_edge = torch.repeat_interleave(torch.arange(seeds.customer.numel()), taken)
        first = torch.cumsum(taken, 0) - taken
        position = (end - taken)[seed_of_edge] + torch.arange(seed_of_edge.numel()) - first[seed_of_edge]
        transactions = self.transaction_by_key[position]
        articles = self.article_of_transaction[transactions]

        batch = HeteroData()
        for node_type, rows in (("customer", seeds.customer), ("transactions", transactions),
                                ("article", articles)):
            batch[node_type].n_id = rows
            batch[node_type].x_cat = self.data[node_type].x_cat[rows]
            batch[node_type].x_num = self.data[node_type].x_num[rows]
        batch["transactions"].time = self.data["transactions"].time[transactions]
        batch["customer"].seed_time = seeds.time
        batch["customer"].num_sampled = taken
        batch["customer"].y = seeds.churned
        local = torch.arange(transactions.numel())  # transaction i's article is article node i
        batch[TO_CUSTOMER].edge_index = torch.stack([local, seed_of_edge])
        batch[FROM_CUSTOMER].edge_index = torch.stack([seed_of_edge, local])
        batch[TO_ARTICLE].edge_index = torch.stack([local, local])
        batch[FROM_ARTICLE].edge_index = torch.stack([local, local])
        return batch

    def batches(self, seeds: SeedTable, batch_size: int, shuffle_seed: int | None) -> Iterator[HeteroData]:
        """Mini-batches over `seeds`, shuffled deterministically when `shuffle_seed` is given."""
        count = seeds.customer.numel()
        if shuffle_seed is None:
            order = torch.arange(count)
        else:
            order = torch.randperm(count, generator=torch.Generator().manual_seed(shuffle_seed))
        for start in range(0, count, batch_size):
            index = order[start:start + batch_size]
            yield self.sample(SeedTable(seeds.customer[index], seeds.time[index], seeds.churned[index]))
