# <check-only> What the rest of model.py defines, so that this file lints on its own.
import torch
WEIGHTS_BYTES = 0
WEIGHTS = []
RAMIEL_WEIGHTS_MAGIC = b''  # placeholder: the 16-byte magic, as a bytes literal
# </check-only>
def load_weights(path):
    """The model's constants from the weights file: [(attribute, tensor)] in WEIGHTS' order."""
    try:
        with open(path, 'rb') as f:
            data = bytearray(f.read())
    except OSError as e:
        raise OSError('%s: cannot read the weights file: %s' % (path, e.strerror)) from None
    if len(data) != WEIGHTS_BYTES or not data.startswith(RAMIEL_WEIGHTS_MAGIC):
        raise ValueError('%s: not the weights file of this model (expected %d bytes)' % (path, WEIGHTS_BYTES))
    weights = []
    for name, dtype, shape, offset, _ in WEIGHTS:
        count = 1
        for d in shape:
            count *= d
        if count == 0:  # torch.frombuffer takes no empty tensor
            weights.append((name, torch.empty(shape, dtype=dtype)))
            continue
        weights.append((name, torch.frombuffer(data, dtype=dtype, count=count, offset=offset).reshape(shape).clone()))
    return weights
