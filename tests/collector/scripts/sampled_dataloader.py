# The stack sampler in a DataLoader's worker processes: two forked workers whose __getitem__ computes in pure Python
# (MARK:getitem) feed a main loop that does nothing else, eight batches ahead, so the workers are busy all along. A
# sampler that must take the GIL sees each worker where it lets the GIL go (its queues, the collation); one that reads
# without it sees the line.
import math
import sys

import torch
from torch.utils.data import DataLoader, Dataset

batches = int(sys.argv[1]) if len(sys.argv) > 1 else 60


class Sines(Dataset):
    def __len__(self):
        return batches * 16

    def __getitem__(self, index):
        return sum(math.sin(index + i) for i in range(4096))  # MARK:getitem


loader = DataLoader(Sines(), batch_size=16, num_workers=2, prefetch_factor=8, multiprocessing_context="fork")
total = 0.0
for batch in loader:
    total += float(batch.sum())
print("done")
