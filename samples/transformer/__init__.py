"""A small causal transformer with hand-written attention: SDPA, inference-mode and quantization candidates."""
