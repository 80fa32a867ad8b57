"""Ranking candidates with a two-tower-style MLP recommender, as a batch ranking script is written: user and item
embeddings concatenated with dense features, scored by an MLP on 120 batches of 256 candidates under
torch.inference_mode(); the top 10 of each batch are kept."""

import torch
from torch import nn


class Ranker(nn.Module):
    def __init__(self, users=5000, items=20000, width=32, dense=16):
        super().__init__()
        self.users = nn.Embedding(users, width)
        self.items = nn.Embedding(items, width)
        self.mlp = nn.Sequential(nn.Linear(2 * width + dense, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                                 nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, 1))

    def forward(self, user_ids, item_ids, features):
        joined = torch.cat([self.users(user_ids), self.items(item_ids), features], dim=1)
        return self.mlp(joined).squeeze(1)


def main():
    torch.manual_seed(0)
    torch.set_num_threads(1)
    ranker = Ranker().eval()
    batches = [(torch.randint(0, 5000, (256,)), torch.randint(0, 20000, (256,)), torch.randn(256, 16))
               for _ in range(120)]
    kept = []
    with torch.inference_mode():
        for user_ids, item_ids, features in batches:
            scores = ranker(user_ids, item_ids, features)
            kept.append(scores.topk(10).indices)
    print(f"ranked {len(batches) * 256} candidates, kept {sum(len(k) for k in kept)}")


if __name__ == "__main__":
    main()
