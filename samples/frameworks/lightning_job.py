"""A Lightning job whose LightningModule compiles its inner network.

Run:  python samples/frameworks/lightning_job.py [--epochs N]

The documented pattern compiles the whole LightningModule; its training_step calls self.log, which Dynamo cannot
always trace, so (as users often do) the module compiles its inner nn.Module. Validation runs under torch.no_grad()
(a grad-mode recompile) and the last batch of each epoch is smaller (a shape recompile).
"""

import argparse
import warnings

import lightning
import torch
from torch import nn


class Regressor(lightning.LightningModule):
    def __init__(self):
        super().__init__()
        self.network = torch.compile(nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1)))

    def training_step(self, batch, batch_index):
        features, targets = batch
        loss = nn.functional.mse_loss(self.network(features), targets)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_index):
        features, targets = batch
        self.log("val_loss", nn.functional.mse_loss(self.network(features), targets))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


def loader(count, seed):
    generator = torch.Generator().manual_seed(seed)
    features = torch.randn(count, 16, generator=generator)
    targets = features.sum(dim=1, keepdim=True)
    return torch.utils.data.DataLoader(torch.utils.data.TensorDataset(features, targets), batch_size=32)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=2, help="epochs (default: 2)")
    options = parser.parse_args()
    warnings.filterwarnings("ignore", ".*does not have many workers.*")
    torch.manual_seed(0)
    trainer = lightning.Trainer(max_epochs=options.epochs, accelerator="cpu", devices=1, logger=False,
                                enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False)
    trainer.fit(Regressor(), train_dataloaders=loader(200, 0), val_dataloaders=loader(70, 1))
    print(f"train_loss {float(trainer.callback_metrics['train_loss']):.4f}")


if __name__ == "__main__":
    main()
