"""Check 6 of docs/gpu-validation.md, the job: a CUDA training loop whose batch size changes, so that the
caching allocator grows, that writes torch.cuda.memory_stats() after every optimizer.step() to a JSON file.
Run under the collector, the store's cuda.* series at each step end must equal these figures
(check_allocator.py): the bridge reads them in the optimizer's post-hook, and nothing allocates between
that hook and the return of optimizer.step().

    python allocator_job.py --steps 30 --out stats.json
"""

import argparse
import json

import torch

# The mapping of docs/FORMAT.md written out again on purpose, not imported from the bridge: a check that shared
# the bridge's table would agree with a wrong key.
SERIES = {
    "cuda.allocated": "allocated_bytes.all.current",
    "cuda.reserved": "reserved_bytes.all.current",
    "cuda.peak_allocated": "allocated_bytes.all.peak",
    "cuda.peak_reserved": "reserved_bytes.all.peak",
    "cuda.inactive_split": "inactive_split_bytes.all.current",
    "cuda.alloc_retries_count": "num_alloc_retries",
    "cuda.device_allocs_count": "num_device_alloc",
    "cuda.device_frees_count": "num_device_free",
    "cuda.ooms_count": "num_ooms",
}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 1024)).cuda()
    optimizer = torch.optim.Adam(model.parameters())
    after_step = []
    for step in range(args.steps):
        batch = 64 * (1 + step % 5)
        optimizer.zero_grad()
        loss = model(torch.randn(batch, 1024, device="cuda")).square().mean()
        loss.backward()
        optimizer.step()
        stats = torch.cuda.memory_stats()
        after_step.append({series: int(stats[key]) for series, key in SERIES.items() if key in stats})
    with open(args.out, "w", encoding="utf-8") as out:
        json.dump({"device": torch.cuda.current_device(), "after_step": after_step}, out)


if __name__ == "__main__":
    main()
