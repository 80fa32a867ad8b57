"""What the Python samples share: the command line every sample accepts (samples/README.md)."""
