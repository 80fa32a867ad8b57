"""GPT-2 (Hugging Face transformers, tiny random config) generating text with a compiled forward.

Each generated token grows the KV cache by one position, so the compiled forward sees new sequence lengths; prompts
of three lengths reach the entries compiled for another length (the decode steps' entries fail on the cache, empty
again, the prompt's entry on the new length alone).
"""
import os

import torch
from transformers import GPT2Config, GPT2LMHeadModel

BACKEND = os.environ.get("VALIDATION_BACKEND", "inductor")


def main():
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=96, n_positions=64, n_embd=32, n_layer=2, n_head=2)
    model = GPT2LMHeadModel(config).eval()
    model.forward = torch.compile(model.forward, backend=BACKEND)
    with torch.no_grad():
        for length in (5, 8, 11):
            prompts = torch.randint(0, config.vocab_size, (2, length))
            tokens = model.generate(prompts, attention_mask=torch.ones_like(prompts), max_new_tokens=6,
                                    do_sample=False, pad_token_id=0)
            print("generated", tokens.shape[1] - prompts.shape[1], "tokens")


if __name__ == "__main__":
    main()
