"""A Hugging Face Trainer job that compiles through TrainingArguments(torch_compile=True).

Run:  python samples/frameworks/hf_trainer.py [--steps N] [--pad-to-multiple-of N]

A 2-layer GPT-2 built from its config (no download) learns synthetic token sequences of varying lengths; the
collator pads each batch to its longest sequence, so the compiled model sees a new sequence length in every
batch. `--pad-to-multiple-of 32` pads to fixed lengths instead.
"""

import argparse
import os
import tempfile

import torch
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments


class SyntheticTokens(torch.utils.data.Dataset):
    """Sequences of 8 to 40 tokens counting up from a random start: learnable, and of many lengths."""

    def __init__(self, count, vocabulary, seed=0):
        generator = torch.Generator().manual_seed(seed)
        lengths = torch.randint(8, 41, (count,), generator=generator)
        starts = torch.randint(0, vocabulary, (count,), generator=generator)
        self.items = [(starts[i] + torch.arange(int(lengths[i]))) % vocabulary for i in range(count)]

    def __len__(self):
        return len(self.items)

    def __getitem__(self, index):
        return {"input_ids": self.items[index]}


class PadToLongest:
    """Pads a batch to its longest sequence (or to a multiple of `pad_to_multiple_of`); labels ignore padding."""

    def __init__(self, pad_to_multiple_of=None):
        self.pad_to_multiple_of = pad_to_multiple_of

    def __call__(self, features):
        length = max(len(feature["input_ids"]) for feature in features)
        if self.pad_to_multiple_of:
            length = -(-length // self.pad_to_multiple_of) * self.pad_to_multiple_of
        input_ids = torch.zeros(len(features), length, dtype=torch.long)
        labels = torch.full((len(features), length), -100, dtype=torch.long)
        attention_mask = torch.zeros(len(features), length, dtype=torch.long)
        for row, feature in enumerate(features):
            tokens = feature["input_ids"]
            input_ids[row, : len(tokens)] = tokens
            labels[row, : len(tokens)] = tokens
            attention_mask[row, : len(tokens)] = 1
        return {"input_ids": input_ids, "labels": labels, "attention_mask": attention_mask}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=4, help="optimizer steps (default: 4)")
    parser.add_argument("--pad-to-multiple-of", type=int, default=None, help="pad batches to fixed lengths")
    options = parser.parse_args()

    torch.manual_seed(0)
    config = GPT2Config(vocab_size=64, n_positions=64, n_embd=32, n_layer=1, n_head=2, bos_token_id=0, eos_token_id=0)
    model = GPT2LMHeadModel(config)
    with tempfile.TemporaryDirectory() as output:
        arguments = TrainingArguments(output_dir=output, torch_compile=True, max_steps=options.steps,
                                      per_device_train_batch_size=8, learning_rate=1e-3, logging_steps=options.steps,
                                      save_strategy="no", report_to=[], use_cpu=True, dataloader_num_workers=0,
                                      disable_tqdm=True)
        trainer = Trainer(model=model, args=arguments, train_dataset=SyntheticTokens(256, config.vocab_size),
                          data_collator=PadToLongest(options.pad_to_multiple_of))
        result = trainer.train()
    print(f"loss {result.training_loss:.4f} after {result.global_step} steps")


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    main()
