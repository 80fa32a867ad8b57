import math

import torch
import torch.nn.functional as F
from torch import nn


class Attention(nn.Module):
    def __init__(self, dropout=0.1):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def dropout_on_weights(self, q, k, v):
        weights = F.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.size(-1)), dim=-1)
        weights = self.dropout(weights)
        return weights @ v

    def weights_returned(self, q, k, v):
        weights = torch.softmax(q @ k.transpose(-2, -1) * 0.125, dim=-1)
        out = weights @ v
        return out, weights

    def other_dim(self, q, k, v):
        return F.softmax(q @ k.transpose(-2, -1), dim=1) @ v

    def finite_fill(self, q, k, v, mask):
        scores = (q @ k.transpose(-2, -1)).masked_fill(mask == 0, -1e9)
        return F.softmax(scores, dim=-1) @ v

    def rebound(self, q, k, v):
        scores = q @ k.transpose(-2, -1) / 8
        q = q * 2
        return F.softmax(scores, dim=-1) @ v + q

    def scores_kept(self, q, k, v):
        scores = q @ k.transpose(-2, -1) / 8
        self.last_scores = scores
        return F.softmax(scores, dim=-1) @ v

    def in_float32(self, q, k, v):
        return F.softmax(q @ k.transpose(-2, -1), dim=-1, dtype=torch.float32) @ v

    def classifier(self, logits):
        return F.softmax(logits, dim=-1)
