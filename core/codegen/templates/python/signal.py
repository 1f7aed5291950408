# <check-only> What the rest of model.py defines, so that this file lints on its own.
import torch
# </check-only>
# Signal processing as the runtime computes it: the windows (in double) and DFT (on torch.fft).


def onnx_window(size, a0, a1, a2, periodic, dtype):
    """HannWindow, HammingWindow, BlackmanWindow: `size` values of a0 + a1 cos(2 pi n / N) +
    a2 cos(4 pi n / N), N the size (periodic) or the size - 1 (symmetric), in double."""
    size = int(size)
    n = size if periodic else size - 1
    phase = torch.arange(size, dtype=torch.float64) * (2 * 3.141592653589793 / (n if n > 0 else 1))
    return (torch.full((size,), a0, dtype=torch.float64) + a1 * torch.cos(phase) + a2 * torch.cos(phase * 2)).to(dtype)


def onnx_dft(x, length, axis, inverse, onesided):
    """ONNX's DFT along axis of a real ([..., 1]) or complex ([..., 2]: real and imaginary parts)
    signal, as [..., 2]; a negative axis counts the real/imaginary axis too. length (None: the
    axis's) zero-pads or truncates; inverse scales by 1 / n; onesided keeps the n // 2 + 1
    frequencies of a real signal. Float16 and bfloat16 are computed in float."""
    wide = torch.float64 if x.dtype == torch.float64 else torch.float32
    signal = torch.view_as_complex(x.to(wide).contiguous()) if x.shape[-1] == 2 else x.squeeze(-1).to(wide)
    axis = axis % x.dim()
    if axis == x.dim() - 1:
        raise ValueError(f'DFT: axis {axis} is the real/imaginary axis')
    n = int(length) if length is not None else None
    y = (torch.fft.ifft(signal, n, axis) if inverse else torch.fft.rfft(signal, n, axis) if onesided
         else torch.fft.fft(signal, n, axis))
    return torch.view_as_real(y).to(x.dtype)
