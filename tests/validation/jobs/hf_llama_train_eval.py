"""Llama-style causal language model (Hugging Face transformers, tiny random config) trained with a compiled
model and a compiled optimizer step while a scheduler lowers the learning rate every step; then evaluated under
torch.no_grad()."""
import os

import torch
from transformers import LlamaConfig, LlamaForCausalLM

BACKEND = os.environ.get("VALIDATION_BACKEND", "inductor")
STEPS = 4


def main():
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=96, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
    model = LlamaForCausalLM(config)
    compiled = torch.compile(model, backend=BACKEND)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.9)

    @torch.compile(backend=BACKEND)
    def optimizer_step():
        optimizer.step()

    model.train()
    for _ in range(STEPS):
        tokens = torch.randint(0, config.vocab_size, (2, 16))
        loss = compiled(input_ids=tokens, labels=tokens).loss
        loss.backward()
        optimizer_step()
        optimizer.zero_grad()
        scheduler.step()

    model.eval()
    with torch.no_grad():
        tokens = torch.randint(0, config.vocab_size, (2, 16))
        loss = compiled(input_ids=tokens, labels=tokens).loss
    print("eval loss", round(float(loss), 3))


if __name__ == "__main__":
    main()
