"""Binary classification metrics computed with torch on whatever device the scores live."""

import torch


def auroc(scores: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Area under the ROC curve as the Mann-Whitney statistic: the chance a positive outranks a negative.

    Ties between scores are broken by order (continuous scores rarely tie). Returns 0.5 when a class is absent.
    """
    ranks = torch.empty_like(scores)
    ranks[torch.argsort(scores)] = torch.arange(1, scores.numel() + 1, dtype=scores.dtype, device=scores.device)
    positives = labels.sum()
    negatives = labels.numel() - positives
    rank_sum = (ranks * labels).sum()
    area = (rank_sum - positives * (positives + 1) / 2) / (positives * negatives).clamp(min=1)
    return torch.where((positives > 0) & (negatives > 0), area, torch.full_like(area, 0.5))
