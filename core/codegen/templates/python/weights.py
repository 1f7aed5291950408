# <check-only> What the rest of run.py defines, so that this file lints on its own.
import torch
WEIGHTS_BYTES = 0
WEIGHTS = []
CHANNELS_LAST = set()
RAMIEL_WEIGHTS_MAGIC = b''  # placeholder: the 16-byte magic, as a bytes literal
# </check-only>
class Weights:
    """The model's constants, one attribute each."""


def load_weights(path):
    try:
        with open(path, 'rb') as f:
            data = bytearray(f.read())
    except OSError as e:
        raise SystemExit('%s: cannot read the weights file: %s' % (path, e.strerror))
    if len(data) != WEIGHTS_BYTES or not data.startswith(RAMIEL_WEIGHTS_MAGIC):
        raise SystemExit('%s: not the weights file of this model (expected %d bytes)' % (path, WEIGHTS_BYTES))
    w = Weights()
    for name, dtype, shape, offset, _ in WEIGHTS:
        count = 1
        for d in shape:
            count *= d
        t = torch.frombuffer(data, dtype=dtype, count=count, offset=offset).reshape(shape).clone()
        if name in CHANNELS_LAST:
            t = t.contiguous(memory_format=torch.channels_last)
        setattr(w, name, t)
    return w
