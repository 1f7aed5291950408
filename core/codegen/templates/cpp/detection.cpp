// <check-only> Declarations from the rest of main.cpp, so that this file compiles on its own.
#include "prelude.cpp"
// </check-only>
// ONNX's detection operators, as the runtime computes them (in double precision): RoiAlign and
// NonMaxSuppression.

// RoiAlign's bilinear samples along one axis of a region: for each sample position of the bins, its
// two neighbouring rows (or columns) with their weights, and whether it lies on the image (within
// one pixel of it).
struct RoiAxisSample {
    int64_t low, high;
    double lowWeight, highWeight;
    bool inside;
};

std::vector<RoiAxisSample> roiAxisSamples(double start, double bin, int64_t bins, int64_t grid, int64_t size)
{
    std::vector<RoiAxisSample> samples;
    for (int64_t b = 0; b < bins; ++b)
        for (int64_t i = 0; i < grid; ++i) {
            double s = start + double(b) * bin + (double(i) + 0.5) * bin / double(grid);
            if (s < -1.0 || s > double(size)) {
                samples.push_back({0, 0, 0.0, 0.0, false});
                continue;
            }
            s = std::max(s, 0.0);
            int64_t low = int64_t(s), high = low + 1;
            if (low >= size - 1) {  // on the last row: that row alone
                high = low = size - 1;
                s = double(low);
            }
            samples.push_back({low, high, 1 - (s - double(low)), s - double(low), true});
        }
    return samples;
}

// ONNX's RoiAlign: each region of x (rois: [R, 4] as x1, y1, x2, y2) pooled into outH x outW bins,
// each the average (mode "avg") or maximum ("max") of a grid of bilinear samples (samplingRatio
// per side, or as many as the bin is wide where 0). Each sample is read for all channels at once
// (x channels-last); the regions are shared among the intra-op threads.
at::Tensor onnxRoiAlign(const at::Tensor& x, const at::Tensor& rois, const at::Tensor& batchIndices, const std::string& mode,
                        int64_t outH, int64_t outW, int64_t samplingRatio, double spatialScale, bool halfPixel)
{
    const at::Tensor X = x.to(at::kDouble).contiguous(at::MemoryFormat::ChannelsLast);
    const at::Tensor boxes = rois.to(at::kDouble).contiguous(), batch = batchIndices.to(at::kLong).contiguous();
    const int64_t C = X.size(1), H = X.size(2), W = X.size(3), R = boxes.size(0);
    const bool max = mode == "max";
    at::Tensor y = at::zeros({R, C, outH, outW}, at::kDouble);
    const double *xp = X.data_ptr<double>(), *rp = boxes.data_ptr<double>();
    const int64_t* bp = batch.data_ptr<int64_t>();
    double* yp = y.data_ptr<double>();
    const double offset = halfPixel ? 0.5 : 0.0;
    at::parallel_for(0, R, 1, [&](int64_t begin, int64_t end) {
        std::vector<double> acc(static_cast<size_t>(C));
        for (int64_t r = begin; r < end; ++r) {
            const double x0 = rp[r * 4] * spatialScale - offset, y0 = rp[r * 4 + 1] * spatialScale - offset;
            double w = rp[r * 4 + 2] * spatialScale - offset - x0, h = rp[r * 4 + 3] * spatialScale - offset - y0;
            if (!halfPixel) {
                w = std::max(w, 1.0);
                h = std::max(h, 1.0);
            }
            const int64_t gridH = samplingRatio > 0 ? samplingRatio : int64_t(std::ceil(h / double(outH)));
            const int64_t gridW = samplingRatio > 0 ? samplingRatio : int64_t(std::ceil(w / double(outW)));
            const double count = double(std::max<int64_t>(gridH * gridW, 1));
            const auto rows = roiAxisSamples(y0, h / double(outH), outH, gridH, H);
            const auto cols = roiAxisSamples(x0, w / double(outW), outW, gridW, W);
            const double* image = xp + bp[r] * H * W * C;
            for (int64_t ph = 0; ph < outH; ++ph)
                for (int64_t pw = 0; pw < outW; ++pw) {
                    std::fill(acc.begin(), acc.end(), 0.0);
                    bool first = true;
                    for (int64_t iy = 0; iy < gridH; ++iy)
                        for (int64_t ix = 0; ix < gridW; ++ix) {
                            const RoiAxisSample& sy = rows[size_t(ph * gridH + iy)];
                            const RoiAxisSample& sx = cols[size_t(pw * gridW + ix)];
                            const bool inside = sy.inside && sx.inside;  // a sample off the image counts 0
                            const double w0 = sy.lowWeight * sx.lowWeight, w1 = sy.lowWeight * sx.highWeight;
                            const double w2 = sy.highWeight * sx.lowWeight, w3 = sy.highWeight * sx.highWeight;
                            const double* p0 = image + (sy.low * W + sx.low) * C;
                            const double* p1 = image + (sy.low * W + sx.high) * C;
                            const double* p2 = image + (sy.high * W + sx.low) * C;
                            const double* p3 = image + (sy.high * W + sx.high) * C;
                            for (int64_t ch = 0; ch < C; ++ch) {
                                const double v0 = inside ? w0 * p0[ch] : 0.0, v1 = inside ? w1 * p1[ch] : 0.0;
                                const double v2 = inside ? w2 * p2[ch] : 0.0, v3 = inside ? w3 * p3[ch] : 0.0;
                                if (max) {
                                    const double m = std::max(std::max(v0, v1), std::max(v2, v3));
                                    acc[size_t(ch)] = first ? m : std::max(acc[size_t(ch)], m);
                                } else {
                                    acc[size_t(ch)] += v0 + v1 + v2 + v3;
                                }
                            }
                            first = false;
                        }
                    for (int64_t ch = 0; ch < C; ++ch)
                        yp[((r * C + ch) * outH + ph) * outW + pw] = max ? acc[size_t(ch)] : acc[size_t(ch)] / count;
                }
        }
    });
    return y.to(x.scalar_type());
}

// ONNX's NonMaxSuppression: for each batch and class, boxes in order of falling score (equal scores
// in their order), each kept unless it overlaps a kept one by more than iouThreshold, at most
// maxPerClass of them; the kept ones as [batch, class, box] rows.
at::Tensor onnxNms(const at::Tensor& boxes, const at::Tensor& scores, const at::Tensor& maxPerClass = {},
                   const at::Tensor& iouThreshold = {}, const at::Tensor& scoreThreshold = {}, bool centerPointBox = false)
{
    auto given = [](const at::Tensor& t) { return t.defined() && t.numel() > 0; };
    const int64_t limit = given(maxPerClass) ? maxPerClass.to(at::kLong).reshape({-1})[0].item<int64_t>() : 0;
    const double iouMax = given(iouThreshold) ? iouThreshold.to(at::kDouble).reshape({-1})[0].item<double>() : 0.0;
    const bool scoreGiven = given(scoreThreshold);
    const double minScore = scoreGiven ? scoreThreshold.to(at::kDouble).reshape({-1})[0].item<double>() : 0.0;
    const at::Tensor b64 = boxes.to(at::kDouble).contiguous(), s64 = scores.to(at::kDouble).contiguous();
    const int64_t B = b64.size(0), N = b64.size(1), C = s64.size(1);
    struct Box {
        double y1, x1, y2, x2;
    };
    auto box = [&](int64_t b, int64_t i) {
        const double* p = b64.data_ptr<double>() + (b * N + i) * 4;
        if (centerPointBox)
            return Box{p[1] - p[3] / 2, p[0] - p[2] / 2, p[1] + p[3] / 2, p[0] + p[2] / 2};
        return Box{std::min(p[0], p[2]), std::min(p[1], p[3]), std::max(p[0], p[2]), std::max(p[1], p[3])};
    };
    auto iou = [](const Box& a, const Box& b) {
        const double ih = std::min(a.y2, b.y2) - std::max(a.y1, b.y1), iw = std::min(a.x2, b.x2) - std::max(a.x1, b.x1);
        if (ih <= 0 || iw <= 0)
            return 0.0;
        const double inter = ih * iw, uni = (a.y2 - a.y1) * (a.x2 - a.x1) + (b.y2 - b.y1) * (b.x2 - b.x1) - inter;
        return uni > 0 ? inter / uni : 0.0;
    };
    Ints rows;
    for (int64_t b = 0; b < B && limit > 0; ++b)
        for (int64_t k = 0; k < C; ++k) {
            const double* s = s64.data_ptr<double>() + (b * C + k) * N;
            Ints order;
            for (int64_t i = 0; i < N; ++i)
                if (!scoreGiven || s[i] > minScore)
                    order.push_back(i);
            std::stable_sort(order.begin(), order.end(), [&](int64_t i, int64_t j) { return s[i] > s[j]; });
            // The kept boxes by their top edge: a candidate is compared only with those whose rows
            // it can meet (top above its bottom, within the tallest one's height, and rounding's
            // margin, above its top); boxes not finite compare with all. The same boxes are kept
            // as by the runtime, which lays the candidates out flat and compares 16 at a time.
            std::multimap<double, Box> kept;
            std::vector<Box> unordered;
            double tallest = 0;
            for (int64_t i : order) {
                if (int64_t(kept.size() + unordered.size()) >= limit)
                    break;
                const Box c = box(b, i);
                const bool finite = std::isfinite(c.y1) && std::isfinite(c.y2) && std::isfinite(c.x1) && std::isfinite(c.x2);
                auto overlaps = [&](const Box& other) { return iou(c, other) > iouMax; };
                bool suppressed = std::any_of(unordered.begin(), unordered.end(), overlaps);
                auto it = finite ? kept.lower_bound(c.y1 - tallest - (std::abs(c.y1) + tallest) * 1e-12) : kept.begin();
                for (; !suppressed && it != kept.end() && (!finite || it->first < c.y2); ++it)
                    suppressed = overlaps(it->second);
                if (suppressed)
                    continue;
                if (finite) {
                    kept.emplace(c.y1, c);
                    tallest = std::max(tallest, c.y2 - c.y1);
                } else {
                    unordered.push_back(c);
                }
                rows.insert(rows.end(), {b, k, i});
            }
        }
    return at::tensor(rows, at::kLong).reshape({int64_t(rows.size() / 3), 3});
}
