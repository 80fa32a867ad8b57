# A data-dependent branch in a module called from a dict comprehension: torch breaks at the branch and
# cannot resume inside the comprehension, so it runs the rest of `forward` (and the comprehension) eagerly.
import torch


class Encoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(3, 3)

    def forward(self, x):
        if x.sum() > 0:  # MARK:branch
            x = x + 1
        return self.linear(x)


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.encoders = torch.nn.ModuleDict({"a": Encoder(), "b": Encoder()})

    def forward(self, inputs):
        encoded = {name: encoder(inputs[name]) for name, encoder in self.encoders.items()}  # MARK:comprehension
        return encoded["a"] + encoded["b"]


model = torch.compile(Model(), backend="eager")
model({"a": torch.ones(2, 3), "b": torch.ones(2, 3)})
print("done")
