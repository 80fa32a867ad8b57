"""A small CNN on synthetic images: channels_last, AMP and inference-mode candidates."""
