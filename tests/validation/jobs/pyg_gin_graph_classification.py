"""PyG's GIN model (torch_geometric.nn.models.GIN) with global add pooling, trained under torch.compile for graph
classification on mini-batches of small synthetic graphs (torch_geometric.loader.DataLoader), so every batch has
a different number of nodes and edges; then evaluated under torch.no_grad()."""
import os

import torch
import torch.nn.functional as F
from torch_geometric.data import Data
from torch_geometric.loader import DataLoader
from torch_geometric.nn import global_add_pool
from torch_geometric.nn.models import GIN

BACKEND = os.environ.get("VALIDATION_BACKEND", "inductor")
FEATURES, CLASSES = 8, 2


class GraphClassifier(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.gnn = GIN(FEATURES, hidden_channels=32, num_layers=2)
        self.head = torch.nn.Linear(32, CLASSES)

    def forward(self, x, edge_index, batch):
        return self.head(global_add_pool(self.gnn(x, edge_index), batch))


def synthetic_graphs(count, generator):
    graphs = []
    for _ in range(count):
        nodes = int(torch.randint(5, 20, (1,), generator=generator))
        edge_index = torch.randint(0, nodes, (2, 3 * nodes), generator=generator)
        x = torch.randn(nodes, FEATURES, generator=generator)
        graphs.append(Data(x=x, edge_index=edge_index, y=torch.tensor([int(x[:, 0].mean() > 0)])))
    return graphs


def main():
    generator = torch.Generator().manual_seed(0)
    torch.manual_seed(0)
    loader = DataLoader(synthetic_graphs(48, generator), batch_size=8, shuffle=True, generator=generator)
    model = GraphClassifier()
    compiled = torch.compile(model, backend=BACKEND)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)

    model.train()
    for batch in loader:
        loss = F.cross_entropy(compiled(batch.x, batch.edge_index, batch.batch), batch.y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()

    model.eval()
    correct = 0
    with torch.no_grad():
        for batch in loader:
            correct += int((compiled(batch.x, batch.edge_index, batch.batch).argmax(-1) == batch.y).sum())
    print("accuracy", correct / 48)


if __name__ == "__main__":
    main()
