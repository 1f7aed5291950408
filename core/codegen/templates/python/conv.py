# <check-only> What the rest of the module imports, so that this file lints on its own.
import torch
import torch.nn.functional as F
# </check-only>
def _has_operator(namespace, name):
    try:
        getattr(getattr(torch.ops, namespace), name)
        return True
    except (AttributeError, RuntimeError):
        return False


# oneDNN's convolution on weights reordered once into its own layout (the operators
# torch.jit.freeze uses), as Ramiel's runtime runs 2-D convolutions; without them, F.conv2d.
PACKED_CONV = (torch.backends.mkldnn.is_available() and _has_operator('mkldnn_prepacked', 'conv2d_prepack')
               and _has_operator('mkldnn_prepacked', 'conv2d_run'))
_packed = {}  # (id(weight), input size, intra-op threads) -> (weight, bias, settings, packed weights)

if PACKED_CONV:
    # Called through TorchScript: a direct torch.ops call from Python looks the packed weights
    # up for __torch_function__, which on a TorchScript object raises and catches a C++
    # exception each time (about 15 us a convolution here). The call releases the GIL.
    @torch.jit.script
    def _conv2d_run(x: torch.Tensor, packed: torch.classes.mkldnn.ConvOpContext) -> torch.Tensor:
        return torch.ops.mkldnn_prepacked.conv2d_run(x, packed)


def _pair(v):
    return [v, v] if isinstance(v, int) else list(v)


def conv2d(x, weight, bias, stride=1, padding=0, dilation=1, groups=1, relu=False):
    """F.conv2d (then F.relu when relu=True) on a channels-last input.

    oneDNN fixes a convolution's layout for the input size and its thread split for the
    calling thread's intra-op threads when the weights are packed, so they are packed
    once for each (size, threads) this convolution meets, and Relu is fused into it.
    """
    x = x.contiguous(memory_format=torch.channels_last)
    if not PACKED_CONV:
        y = F.conv2d(x, weight, bias, stride=stride, padding=padding, dilation=dilation, groups=groups)
        return F.relu(y, inplace=True) if relu else y
    key = (id(weight), x.shape, torch.get_num_threads())
    settings = (stride, padding, dilation, groups, relu)
    entry = _packed.get(key)
    # (A tensor made later may reuse a freed one's id, or share its weights with other settings.)
    if entry is None or entry[0] is not weight or entry[1] is not bias or entry[2] != settings:
        # Weights with channels-last strides (also for 1x1 kernels, where
        # contiguous(memory_format=torch.channels_last) keeps the contiguous strides):
        # packed from contiguous ones, they are laid out for a blocked input and
        # conv2d_run reorders them into the channels-last primitive's layout on every run.
        o, i, kh, kw = weight.shape
        w = torch.empty_strided(weight.shape, (i * kh * kw, 1, kw * i, i), dtype=weight.dtype)
        w.copy_(weight)
        packed = torch.ops.mkldnn_prepacked.conv2d_prepack(
            w, bias, _pair(stride), _pair(padding), _pair(dilation), groups, list(x.shape),
            'relu' if relu else 'none')
        entry = _packed[key] = (weight, bias, settings, packed)
    return _conv2d_run(x, entry[3])
