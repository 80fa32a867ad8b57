"""Exports the four small models of docs/performance.md's optimize figures: python optimize_models.py OUT_DIR.

Built from torch alone (no downloads, random weights): a ResNet-style CNN, a transformer-encoder classifier, an
LSTM classifier and an MLP recommender over embeddings, each with a dynamic batch dimension. Then measure each with
`torchscope optimize OUT_DIR/NAME.pt2 --rounds 5 --iterations 20 --format json`.
"""

import os
import sys

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x):
        return torch.relu(x + self.bn2(self.conv2(torch.relu(self.bn1(self.conv1(x))))))


class ResNetSmall(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1, bias=False), nn.BatchNorm2d(32), nn.ReLU())
        self.stage1 = nn.Sequential(Block(32), Block(32))
        self.down = nn.Sequential(nn.Conv2d(32, 64, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(64), nn.ReLU())
        self.stage2 = nn.Sequential(Block(64), Block(64))
        self.head = nn.Linear(64, classes)

    def forward(self, x):
        x = self.stage2(self.down(self.stage1(self.stem(x))))
        return self.head(x.mean(dim=(2, 3)))


class EncoderClassifier(nn.Module):
    def __init__(self, vocab=5000, width=128, classes=4):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        layer = nn.TransformerEncoderLayer(width, 4, 256, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.head = nn.Linear(width, classes)

    def forward(self, tokens):
        return self.head(self.encoder(self.embed(tokens)).mean(dim=1))


class LstmClassifier(nn.Module):
    def __init__(self, vocab=5000, width=128, classes=4):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.lstm = nn.LSTM(width, width, num_layers=2, batch_first=True)
        self.head = nn.Linear(width, classes)

    def forward(self, tokens):
        out, _ = self.lstm(self.embed(tokens))
        return self.head(out[:, -1])


class MlpRecommender(nn.Module):
    def __init__(self, users=10000, items=5000, width=64):
        super().__init__()
        self.users = nn.Embedding(users, width)
        self.items = nn.Embedding(items, width)
        self.mlp = nn.Sequential(nn.Linear(2 * width, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 1))

    def forward(self, user, item):
        return self.mlp(torch.cat([self.users(user), self.items(item)], dim=1)).squeeze(1)


def models():
    """name -> (the model in eval mode, its example inputs), seeded."""
    torch.manual_seed(0)
    built = {
        "resnet_small": (ResNetSmall(), (torch.randn(8, 3, 32, 32),)),
        "encoder_classifier": (EncoderClassifier(), (torch.randint(0, 5000, (8, 64)),)),
        "lstm_classifier": (LstmClassifier(), (torch.randint(0, 5000, (8, 64)),)),
        "mlp_recommender": (MlpRecommender(), (torch.randint(0, 10000, (256,)), torch.randint(0, 5000, (256,)))),
    }
    return {name: (model.eval(), args) for name, (model, args) in built.items()}


def export(model, args):
    """The program optimize measures: the batch dimension of every input dynamic."""
    batch = torch.export.Dim("batch", min=1, max=1024)
    return torch.export.export(model, args, dynamic_shapes=tuple({0: batch} for _ in args))


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    for name, (model, args) in models().items():
        torch.export.save(export(model, args), os.path.join(out_dir, f"{name}.pt2"))
        print(name)


if __name__ == "__main__":
    main(sys.argv[1])
