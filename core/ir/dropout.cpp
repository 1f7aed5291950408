#include "core/ir/dropout.h"

namespace ramiel {

DropoutMode dropoutMode(const Node& n, const std::function<const Tensor*(size_t)>& constant)
{
    DropoutMode m;
    if (n.opset < 12) {
        m.training = n.opset < 7 && n.attrInt("is_test", 0) == 0;
        m.ratio = n.attrFloat("ratio", 0.5f);
        return m;
    }
    auto scalar = [&](size_t i) -> std::optional<double> {
        const Tensor* t = constant(i);
        const auto d = t ? t->toDoubles() : std::nullopt;
        return d && d->size() == 1 ? std::optional<double>((*d)[0]) : std::nullopt;
    };
    if (n.input(2) == kNone)
        m.training = false;
    else if (const auto t = scalar(2))
        m.training = *t != 0.0;
    if (n.input(1) == kNone)
        m.ratio = 0.5;
    else
        m.ratio = scalar(1);
    return m;
}

}  // namespace ramiel
