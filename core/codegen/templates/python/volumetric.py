# <check-only> What the rest of model.py defines, so that this file lints on its own.
import torch
import torch.nn.functional as F
from onednn import conv2d, max_pool2d, _pooled_size
# </check-only>
# 3-D convolutions and max pooling (video models) on the 2-D helpers above, as the runtime runs
# them. A convolution whose window spans one plane (1 x kh x kw, the spatial half of R(2+1)D's
# and S3D's factorized convolutions) is a 2-D one over the N·D planes as images; one that spans
# one axis (kd x 1 x 1, the temporal half) a 2-D one over each sample as an image of D rows of
# H·W pixels. Both views are free on a channels-last-3d tensor, which is what they leave.
_planar_weights = {}  # id(weight) -> (weight, the same weights for the 2-D convolution)


def _triple(v):
    return [v, v, v] if isinstance(v, int) else list(v)


def conv3d(x, weight, bias, stride=1, padding=0, dilation=1, groups=1, relu=False):
    """F.conv3d (then F.relu when relu=True)."""
    stride, padding, dilation = _triple(stride), _triple(padding), _triple(dilation)
    kd, kh, kw = weight.shape[2:]
    planes = kd == 1 and stride[0] == 1 and padding[0] == 0
    depth = kh == 1 and kw == 1 and stride[1:] == [1, 1] and padding[1:] == [0, 0]
    if x.dtype != torch.float32 or not (planes or depth):
        y = F.conv3d(x, weight, bias, stride, padding, dilation, groups)
        return F.relu(y, inplace=True) if relu else y
    entry = _planar_weights.get(id(weight))
    if entry is None or entry[0] is not weight:
        flat = weight[:, :, 0] if planes else weight[..., 0]  # [O, I, kh, kw] or [O, I, kd, 1]
        entry = _planar_weights[id(weight)] = (weight, flat.contiguous())
    x = x.contiguous(memory_format=torch.channels_last_3d)
    n, c, d, h, w = x.shape
    if planes:
        y = conv2d(x.transpose(1, 2).reshape(n * d, c, h, w), entry[1], bias, stride[1:], padding[1:], dilation[1:],
                   groups, relu)
        return y.reshape(n, d, *y.shape[1:]).transpose(1, 2)
    y = conv2d(x.reshape(n, c, d, h * w), entry[1], bias, [stride[0], 1], [padding[0], 0], [dilation[0], 1], groups,
               relu)
    return y.reshape(n, y.shape[1], y.shape[2], h, w)


def max_pool3d(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    """F.max_pool3d without the indices, of a value that is finite whenever the model's inputs are
    (as max_pool2d's): each depth plane's max pooling (max_pool2d), then the maximum over each
    window's planes."""
    kernel = _triple(kernel_size)
    stride = kernel if stride is None else _triple(stride)
    padding, dilation = _triple(padding), _triple(dilation)
    if x.dtype != torch.float32 or x.dim() != 5:
        return F.max_pool3d(x, kernel, stride, padding, dilation, ceil_mode=ceil_mode)
    x = x.contiguous(memory_format=torch.channels_last_3d)
    n, c, d, h, w = x.shape
    planes = max_pool2d(x.transpose(1, 2).reshape(n * d, c, h, w), kernel[1:], stride[1:], padding[1:], dilation[1:],
                        ceil_mode)
    planes = planes.reshape(n, d, *planes.shape[1:])  # [N, D, C, H', W']
    depth = _pooled_size(d, kernel[0], stride[0], padding[0], dilation[0], ceil_mode)
    span = (depth - 1) * stride[0] + 1  # the planes from a window's first to the last window's
    right = (kernel[0] - 1) * dilation[0] + span - d - padding[0]
    if padding[0] > 0 or right > 0:  # planes outside the input count as -inf
        planes = F.pad(planes, (0, 0, 0, 0, 0, 0, padding[0], max(right, 0)), value=float('-inf'))
    y = planes[:, 0:span:stride[0]]
    for tap in range(1, kernel[0]):
        start = tap * dilation[0]
        y = torch.maximum(y, planes[:, start:start + span:stride[0]])
    return y.transpose(1, 2)
