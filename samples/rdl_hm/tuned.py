"""The same training written for torch.compile: dynamic shapes, a tensor learning rate, metrics kept on the device
and read once per epoch, `repeat_interleave` with `output_size`, string-keyed modules and no graph break."""

import time

import torch
import torch.nn.functional as F

from .experiment import LEARNING_RATE, EpochResult, Experiment, cosine_learning_rate, model_inputs
from .metrics import auroc
from .model import ChurnGNN


def evaluate(experiment: Experiment, model) -> tuple[float, float]:
    logits, labels = [], []
    with torch.no_grad():
        for batch in experiment.validation_batches():
            logits.append(model(*model_inputs(batch, experiment.device, string_keys=True)))
            labels.append(batch["customer"].y.to(experiment.device))
    all_logits, all_labels = torch.cat(logits), torch.cat(labels)
    loss = F.binary_cross_entropy_with_logits(all_logits, all_labels)
    loss_and_auroc = torch.stack([loss, auroc(all_logits, all_labels)]).tolist()  # the one read of the pass
    return loss_and_auroc[0], loss_and_auroc[1]


def train(experiment: Experiment, on_epoch) -> list[EpochResult]:
    torch.manual_seed(experiment.seed)
    model = ChurnGNN(experiment.tables, tuned=True, **experiment.scale.model_arguments).to(experiment.device)
    compiled_model = torch.compile(model, dynamic=True)
    # The schedule writes into the tensor in place; an LRScheduler would also wrap optimizer.step in a function
    # that Dynamo skips, which is one more graph break.
    learning_rate = torch.tensor(LEARNING_RATE, device=experiment.device)
    optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate, capturable=experiment.device.type == "cuda")
    optimizer_step = torch.compile(optimizer.step)
    results = []
    for epoch in range(1, experiment.epochs + 1):
        started = time.perf_counter()
        model.train()
        loss_sum = torch.zeros((), device=experiment.device)
        seeds = 0
        for batch in experiment.train_batches(epoch):
            optimizer.zero_grad()
            logits = compiled_model(*model_inputs(batch, experiment.device, string_keys=True))
            loss = F.binary_cross_entropy_with_logits(logits, batch["customer"].y.to(experiment.device))
            loss.backward()
            optimizer_step()
            loss_sum += loss.detach() * logits.size(0)
            seeds += logits.size(0)
        learning_rate.fill_(cosine_learning_rate(epoch, experiment.epochs))
        model.eval()
        validation_loss, validation_auroc = evaluate(experiment, model)
        results.append(EpochResult(epoch, (loss_sum / seeds).item(), validation_loss, validation_auroc,
                                   time.perf_counter() - started))
        on_epoch(results[-1])
    return results
