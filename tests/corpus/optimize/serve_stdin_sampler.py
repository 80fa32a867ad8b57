# A denoising sampler served from standard input: each line asks for a batch of that many samples. The model keeps
# its own step counter, so each call's output depends on how many calls came before it.
import sys

import torch


class Denoiser(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.SiLU(), torch.nn.Linear(32, 16))
        self.step = 0

    def forward(self, x):
        noise_scale = 1.0 / (1 + self.step)
        self.step += 1
        return x - noise_scale * self.net(x)


model = Denoiser().eval()
torch.manual_seed(0)
served = 0
for line in sys.stdin:
    with torch.no_grad():
        samples = model(torch.randn(int(line), 16))
    served += 1
print(f"served {served} requests, last batch {tuple(samples.shape)}")
