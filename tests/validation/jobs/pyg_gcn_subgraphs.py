"""PyG's GCN model (torch_geometric.nn.models.GCN) trained under torch.compile on induced subgraphs of a
synthetic graph, so the node and edge counts change every batch; then evaluated on the full graph under
torch.no_grad()."""
import os

import torch
import torch.nn.functional as F
from torch_geometric.nn.models import GCN
from torch_geometric.utils import subgraph

BACKEND = os.environ.get("VALIDATION_BACKEND", "inductor")
NODES, FEATURES, CLASSES = 400, 16, 4


def synthetic_graph(generator):
    x = torch.randn(NODES, FEATURES, generator=generator)
    edge_index = torch.randint(0, NODES, (2, 4 * NODES), generator=generator)
    y = (x[:, 0] > 0).long() + 2 * (x[:, 1] > 0).long()
    return x, edge_index, y


def main():
    generator = torch.Generator().manual_seed(0)
    torch.manual_seed(0)
    x, edge_index, y = synthetic_graph(generator)
    model = GCN(FEATURES, hidden_channels=32, num_layers=2, out_channels=CLASSES)
    compiled = torch.compile(model, backend=BACKEND)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)

    model.train()
    for batch_nodes in (120, 150, 90, 200, 120):
        nodes = torch.randperm(NODES, generator=generator)[:batch_nodes]
        sub_edges, _ = subgraph(nodes, edge_index, relabel_nodes=True, num_nodes=NODES)
        loss = F.cross_entropy(compiled(x[nodes], sub_edges), y[nodes])
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()

    model.eval()
    with torch.no_grad():
        accuracy = (compiled(x, edge_index).argmax(-1) == y).float().mean()
    print("accuracy", round(float(accuracy), 3))


if __name__ == "__main__":
    main()
