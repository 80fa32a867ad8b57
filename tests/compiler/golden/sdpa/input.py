import math

import torch
import torch.nn.functional as F
from torch import nn


class Attention(nn.Module):
    def __init__(self, d_model, heads):
        super().__init__()
        self.heads = heads
        self.head_dim = d_model // heads
        self.scale = self.head_dim ** -0.5
        self.qkv = nn.Linear(d_model, 3 * d_model)

    def split(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        shape = (x.shape[0], x.shape[1], self.heads, self.head_dim)
        return (t.view(shape).transpose(1, 2) for t in (q, k, v))

    def one_expression(self, x):
        q, k, v = self.split(x)
        return F.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.size(-1)), dim=-1) @ v

    def times_scale(self, x):
        q, k, v = self.split(x)
        out = torch.softmax(q @ k.transpose(-1, -2) * self.scale, dim=-1) @ v
        return out.transpose(1, 2)

    def with_matmul(self, x, bias):
        q, k, v = self.split(x)
        scores = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.head_dim)
        scores = scores + bias  # relative-position bias
        weights = scores.softmax(dim=-1)
        return torch.matmul(weights, v)

    def padding_mask(self, x, mask):
        q, k, v = self.split(x)
        scores = q @ k.transpose(-2, -1) * k.shape[-1] ** -0.5
        scores = scores.masked_fill(mask == 0, float("-inf"))
        weights = F.softmax(scores, dim=-1)
        out = weights @ v
        return out

    def causal(self, x, future):
        q, k, v = self.split(x)
        weights = (q @ k.mT).masked_fill(future, -math.inf).softmax(-1)
        return weights @ v

    def unscaled(self, x):
        q, k, v = self.split(x)
        return F.softmax(torch.bmm(q[0], k[0].transpose(-2, -1)), dim=-1) @ v[0]
