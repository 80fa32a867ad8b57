import torch


def expand(index, counts, batch_size):
    seeds = torch.repeat_interleave(index, counts)
    again = index.repeat_interleave(counts, dim=0)
    known = torch.repeat_interleave(index, counts, output_size=batch_size * 4)
    return seeds, again, known
