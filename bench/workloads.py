"""The job the collector's overhead benches share: an eager MLP training loop (256-512-512-10, batch 64, SGD, one
intra-op thread), built in the worker process so that its import of torch is part of what a bench measures."""


def eager_mlp_loop():
    """train(steps): runs that many training steps of the one model, optimizer and batch."""
    import torch

    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512),
                                torch.nn.ReLU(), torch.nn.Linear(512, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    inputs, targets = torch.randn(64, 256), torch.randint(0, 10, (64,))

    def train(steps):
        for _ in range(steps):
            optimizer.zero_grad(set_to_none=True)
            torch.nn.functional.cross_entropy(model(inputs), targets).backward()
            optimizer.step()

    return train
