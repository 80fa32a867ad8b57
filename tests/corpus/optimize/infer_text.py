# Text classification inference with a small BERT, in the style of the transformers quick tour.
import torch
from transformers import BertConfig, BertForSequenceClassification

config = BertConfig(vocab_size=1000, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                    intermediate_size=128, num_labels=3)
model = BertForSequenceClassification(config).eval()

torch.manual_seed(0)
for batch_size in (8, 8, 4, 16):
    inputs = {"input_ids": torch.randint(0, config.vocab_size, (batch_size, 32)),
              "attention_mask": torch.ones(batch_size, 32, dtype=torch.long)}
    with torch.no_grad():
        logits = model(**inputs).logits
    predicted = logits.argmax(dim=-1)
    print(f"batch of {batch_size}: predicted classes {predicted.tolist()}")
