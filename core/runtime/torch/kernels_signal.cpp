// Signal processing: DFT, on ATen's FFT (pocketfft inside libtorch).
#include "core/runtime/torch/kernel.h"

#include "core/util/error.h"

namespace ramiel {

namespace {

// DFT: the discrete Fourier transform along `axis` of a real ([..., 1]) or complex
// ([..., 2], real and imaginary parts) signal, as [..., 2] (a negative axis counted from the
// real/imaginary axis's end, as ONNX counts it); dft_length zero-pads
// or truncates the axis; `inverse` scales by 1 / n as NumPy's ifft; `onesided`
// keeps the n / 2 + 1 frequencies a real signal's spectrum repeats.
Kernel dftKernel(const KernelContext& c)
{
    // Since opset 20 the axis is input 2, -2 where it is left out; before, an attribute, 1 by default.
    const bool axisInput = c.opset() >= 20;
    const int64_t axisAttr = c.node.attrInt("axis", 1);
    const bool inverse = c.node.attrInt("inverse", 0) != 0, onesided = c.node.attrInt("onesided", 0) != 0;
    if (inverse && onesided)
        c.unsupported("an inverse one-sided DFT is not supported");
    return [=](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
        const at::Tensor& x = in[0];
        if (x.dim() < 2 || (x.size(-1) != 1 && x.size(-1) != 2))
            throw Error(ErrorKind::Runtime, {}, "the input of shape " + shapeText(x.sizes()) +
                                                    " does not end in 1 (real) or 2 (complex) values");
        if (!at::isFloatingType(x.scalar_type()))
            throw Error(ErrorKind::Runtime, {}, "the input is not of a floating-point type");
        const bool complex = x.size(-1) == 2;
        if (complex && onesided)
            throw Error(ErrorKind::Runtime, {}, "a one-sided DFT needs a real input");
        int64_t given = axisAttr;
        if (axisInput) {
            given = -2;
            if (in.size() > 2 && in[2].defined()) {
                if (in[2].numel() != 1)
                    throw Error(ErrorKind::Runtime, {}, "axis holds " + std::to_string(in[2].numel()) + " values, not one");
                given = in[2].item<int64_t>();
            }
        }
        // A negative axis counts over the whole input, its real/imaginary axis too (as ONNX's
        // reference and ONNX Runtime count it): -2 is the signal's last axis.
        const int64_t axis = normalizeAxis(given, x.dim());
        if (axis == x.dim() - 1)
            throw Error(ErrorKind::Runtime, {}, "axis " + std::to_string(given) + " is the real/imaginary axis, not one of the signal's");
        const at::Tensor signal = complex ? at::view_as_complex(x.to(x.scalar_type() == at::kDouble ? at::kDouble : at::kFloat).contiguous())
                                          : x.squeeze(-1).to(x.scalar_type() == at::kDouble ? at::kDouble : at::kFloat);
        c10::optional<int64_t> n;
        if (in.size() > 1 && in[1].defined()) {
            if (in[1].numel() != 1)
                throw Error(ErrorKind::Runtime, {}, "dft_length holds " + std::to_string(in[1].numel()) + " values, not one");
            n = in[1].item<int64_t>();
            if (*n < 1)
                throw Error(ErrorKind::Runtime, {}, "dft_length " + std::to_string(*n) + " is not positive");
        }
        const at::Tensor y = inverse ? at::fft_ifft(signal, n, axis)
                             : onesided ? at::fft_rfft(signal, n, axis)
                                        : at::fft_fft(signal, n, axis);
        out[0] = at::view_as_real(y).to(x.scalar_type());
    };
}

}  // namespace

void registerSignalKernels(KernelRegistry& r) { r["DFT"] = dftKernel; }

}  // namespace ramiel
