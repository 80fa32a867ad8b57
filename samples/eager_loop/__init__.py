"""An eager-only training loop made of many small ops: a torch.compile candidate."""
