import torch


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.convs = torch.nn.ModuleDict({
            ("customer", "buys", "article"): torch.nn.Linear(8, 8),
            ('article', 'rev_buys', 'customer'): torch.nn.Linear(8, 8),
        })
        self.plain = {("a", "b"): 1}  # not a ModuleDict: left alone

    def forward(self, x):
        y = self.convs["customer", "buys", "article"](x)
        z = self.convs[("article", "rev_buys", "customer")](y)
        return z + self.plain[("a", "b")]
