import torch
from torch import optim

model = torch.nn.Linear(4, 4)
adam = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=1e-4)
sgd = optim.SGD(model.parameters(), 0.1, momentum=0.9)
base_lr = 3e-4
adamw = torch.optim.AdamW(
    model.parameters(),
    lr=base_lr,  # from the config
)
done = torch.optim.Adam(model.parameters(), lr=torch.tensor(0.01))
learning_rate = torch.tensor(0.01)
kept = torch.optim.Adam(model.parameters(), lr=learning_rate)  # may be a tensor already: left alone
LEARNING_RATE = 0.02
constant = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
