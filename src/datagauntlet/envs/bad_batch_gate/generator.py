"""Placeholder; replaced below."""
SPLIT_SIZES = {"train": 320, "eval": 32, "test": 320}


def generate(split, index, seed, extended):
    raise NotImplementedError
