"""BERT sequence classifier (Hugging Face transformers, tiny random config) fine-tuned under torch.compile on
batches padded to their longest sentence, so the sequence length varies from batch to batch; then evaluated
under torch.no_grad()."""
import os

import torch
from transformers import BertConfig, BertForSequenceClassification

BACKEND = os.environ.get("VALIDATION_BACKEND", "inductor")
SEQUENCE_LENGTHS = [8, 12, 16, 8, 20, 12]


def batch(config, length, size=4):
    input_ids = torch.randint(1, config.vocab_size, (size, length))
    return {"input_ids": input_ids, "attention_mask": torch.ones_like(input_ids),
            "labels": torch.randint(0, config.num_labels, (size,))}


def main():
    torch.manual_seed(0)
    config = BertConfig(vocab_size=128, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=64, num_labels=2)
    model = BertForSequenceClassification(config)
    compiled = torch.compile(model, backend=BACKEND)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

    model.train()
    for length in SEQUENCE_LENGTHS:
        loss = compiled(**batch(config, length)).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()

    model.eval()
    correct = 0
    with torch.no_grad():
        for length in (16, 12):
            inputs = batch(config, length)
            labels = inputs.pop("labels")
            correct += int((compiled(**inputs).logits.argmax(-1) == labels).sum())
    print("eval accuracy", correct / 8)


if __name__ == "__main__":
    main()
