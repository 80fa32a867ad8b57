"""The training loop as a practitioner first writes it. Its problems are listed, with lines, in README.md."""

import time

import torch
import torch.nn.functional as F

from .experiment import LEARNING_RATE, EpochResult, Experiment, model_inputs
from .metrics import auroc
from .model import ChurnGNN


def evaluate(experiment: Experiment, model) -> tuple[float, float]:
    scores, labels, loss_sum = [], [], 0.0
    with torch.no_grad():
        for batch in experiment.validation_batches():
            logits = model(*model_inputs(batch, experiment.device, string_keys=False))
            y = batch["customer"].y.to(experiment.device)
            loss_sum += F.binary_cross_entropy_with_logits(logits, y, reduction="sum").item()
            scores += torch.sigmoid(logits).tolist()
            labels += y.tolist()
    return loss_sum / len(labels), auroc(torch.tensor(scores), torch.tensor(labels)).item()


def train(experiment: Experiment, on_epoch) -> list[EpochResult]:
    torch.manual_seed(experiment.seed)
    model = ChurnGNN(experiment.tables, tuned=False, **experiment.scale.model_arguments).to(experiment.device)
    compiled_model = torch.compile(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=experiment.epochs)
    optimizer_step = torch.compile(optimizer.step)
    results = []
    for epoch in range(1, experiment.epochs + 1):
        started = time.perf_counter()
        model.train()
        loss_sum, seeds = 0.0, 0
        for batch in experiment.train_batches(epoch):
            optimizer.zero_grad()
            logits = compiled_model(*model_inputs(batch, experiment.device, string_keys=False))
            loss = F.binary_cross_entropy_with_logits(logits, batch["customer"].y.to(experiment.device))
            loss.backward()
            optimizer_step()
            loss_sum += loss.item() * logits.size(0)
            seeds += logits.size(0)
        scheduler.step()
        model.eval()
        validation_loss, validation_auroc = evaluate(experiment, model)
        results.append(EpochResult(epoch, loss_sum / seeds, validation_loss, validation_auroc,
                                   time.perf_counter() - started))
        on_epoch(results[-1])
    return results
