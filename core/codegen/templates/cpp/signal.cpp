// <check-only> Declarations from the rest of main.cpp, so that this file compiles on its own.
#include "prelude.cpp"
// </check-only>
// Signal processing as the runtime computes it: the windows (in double) and DFT (on at::fft_*).

// HannWindow, HammingWindow, BlackmanWindow: `size` values of a0 + a1 cos(2 pi n / N) +
// a2 cos(4 pi n / N), N the size (periodic) or the size - 1 (symmetric), in double.
at::Tensor onnxWindow(const at::Tensor& sizeTensor, double a0, double a1, double a2, bool periodic, at::ScalarType dtype)
{
    const int64_t size = sizeTensor.item<int64_t>();
    const double n = double(periodic ? size : size - 1);
    const at::Tensor phase = at::arange(size, at::kDouble) * (2 * M_PI / (n > 0 ? n : 1));
    return (at::full({size}, a0, at::kDouble) + a1 * at::cos(phase) + a2 * at::cos(phase * 2.0)).to(dtype);
}

// ONNX's DFT along axis of a real ([..., 1]) or complex ([..., 2]: real and imaginary parts)
// signal, as [..., 2]; a negative axis counts the real/imaginary axis too. length (undefined: the
// axis's) zero-pads or truncates; inverse scales by 1 / n; onesided keeps the n / 2 + 1
// frequencies of a real signal. Half and bfloat16 are computed in float.
at::Tensor onnxDft(const at::Tensor& x, const at::Tensor& length, int64_t axis, bool inverse, bool onesided)
{
    const at::ScalarType wide = x.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
    const at::Tensor signal = x.size(-1) == 2 ? at::view_as_complex(x.to(wide).contiguous()) : x.squeeze(-1).to(wide);
    axis = axis < 0 ? axis + x.dim() : axis;
    if (axis == x.dim() - 1)
        throw std::runtime_error("DFT: axis " + std::to_string(axis) + " is the real/imaginary axis");
    const c10::optional<int64_t> n = length.defined() ? c10::optional<int64_t>(length.item<int64_t>()) : c10::nullopt;
    const at::Tensor y = inverse ? at::fft_ifft(signal, n, axis) : onesided ? at::fft_rfft(signal, n, axis) : at::fft_fft(signal, n, axis);
    return at::view_as_real(y).to(x.scalar_type());
}
