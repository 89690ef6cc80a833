"""Other tensor containers: safetensors, npz and dicts of NumPy arrays, PyTorch state dicts."""
