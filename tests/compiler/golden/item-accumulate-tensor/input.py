import torch


def train(model, loader, optimizer):
    for epoch in range(2):
        total_loss = 0.0
        correct = 0
        for x, y in loader:
            loss = model(x, y)
            loss.backward()
            optimizer.step()
            total_loss += loss.detach().item() * x.size(0)
            correct += (model(x) == y).sum().item()
            seen = seen + loss.item()
        print(f"epoch {epoch} loss={total_loss:.4f} correct={correct}")
    final = loss.item()  # outside a loop: one sync, left alone
    return final
