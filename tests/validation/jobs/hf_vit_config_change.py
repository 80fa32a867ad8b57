"""ViT image classifier (Hugging Face transformers, tiny random config) trained a few steps under torch.compile;
afterwards the script turns on `output_hidden_states` in the model's config to extract features."""
import os

import torch
from transformers import ViTConfig, ViTForImageClassification

BACKEND = os.environ.get("VALIDATION_BACKEND", "inductor")


def main():
    torch.manual_seed(0)
    config = ViTConfig(image_size=16, patch_size=4, num_channels=3, hidden_size=32, num_hidden_layers=2,
                       num_attention_heads=2, intermediate_size=64, num_labels=3)
    model = ViTForImageClassification(config)
    compiled = torch.compile(model, backend=BACKEND)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for _ in range(3):
        images = torch.randn(4, 3, 16, 16)
        labels = torch.randint(0, config.num_labels, (4,))
        loss = compiled(pixel_values=images, labels=labels).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()

    model.config.output_hidden_states = True  # features for a probe
    images = torch.randn(4, 3, 16, 16)
    outputs = compiled(pixel_values=images)
    print("hidden states", len(outputs.hidden_states))


if __name__ == "__main__":
    main()
