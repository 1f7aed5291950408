#include "core/ir/window.h"

#include <algorithm>
#include <string>

namespace ramiel {

std::vector<int64_t> Window::atenPads() const
{
    std::vector<int64_t> p;
    for (size_t i = padBegin.size(); i-- > 0;) {
        p.push_back(padBegin[i]);
        p.push_back(padEnd[i]);
    }
    return p;
}

Window windowOf(const Node& n, const std::vector<int64_t>& kernel, const std::vector<int64_t>& spatial)
{
    Window w;
    const size_t d = kernel.size();
    w.kernel = kernel;
    w.strides = n.attrInts("strides");
    w.dilations = n.attrInts("dilations");
    if (w.strides.empty())
        w.strides.assign(d, 1);
    if (w.dilations.empty())
        w.dilations.assign(d, 1);
    w.ceil = n.attrInt("ceil_mode", 0) != 0;
    const std::string autoPad = n.attrString("auto_pad", "NOTSET");
    const auto pads = n.attrInts("pads");
    w.padBegin.assign(d, 0);
    w.padEnd.assign(d, 0);
    if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
        for (size_t i = 0; i < d && i < spatial.size() && i < w.strides.size() && i < w.dilations.size(); ++i) {
            const int64_t out = (spatial[i] + w.strides[i] - 1) / w.strides[i];
            const int64_t total =
                std::max<int64_t>(0, (out - 1) * w.strides[i] + (w.kernel[i] - 1) * w.dilations[i] + 1 - spatial[i]);
            w.padBegin[i] = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
            w.padEnd[i] = total - w.padBegin[i];
        }
    } else if (autoPad != "VALID" && pads.size() == 2 * d) {
        for (size_t i = 0; i < d; ++i) {
            w.padBegin[i] = pads[i];
            w.padEnd[i] = pads[i + d];
        }
    }
    return w;
}

}  // namespace ramiel
