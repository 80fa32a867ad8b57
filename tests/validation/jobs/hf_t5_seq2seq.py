"""T5 encoder-decoder (Hugging Face transformers, tiny random config) trained under torch.compile on pairs whose
source and target lengths vary, then used for greedy generation."""
import os

import torch
from transformers import T5Config, T5ForConditionalGeneration

BACKEND = os.environ.get("VALIDATION_BACKEND", "inductor")
LENGTHS = [(10, 6), (14, 8), (10, 6), (18, 4)]


def main():
    torch.manual_seed(0)
    config = T5Config(vocab_size=96, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_decoder_layers=2, num_heads=4,
                      decoder_start_token_id=0, pad_token_id=0, eos_token_id=1)
    model = T5ForConditionalGeneration(config)
    compiled = torch.compile(model, backend=BACKEND)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

    model.train()
    for source_length, target_length in LENGTHS:
        source = torch.randint(2, config.vocab_size, (4, source_length))
        target = torch.randint(2, config.vocab_size, (4, target_length))
        loss = compiled(input_ids=source, attention_mask=torch.ones_like(source), labels=target).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()

    model.eval()
    with torch.no_grad():
        source = torch.randint(2, config.vocab_size, (2, 10))
        generated = model.generate(source, max_new_tokens=4, do_sample=False)
    print("generated", generated.shape[1], "tokens")


if __name__ == "__main__":
    main()
