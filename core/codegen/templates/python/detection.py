# <check-only> What the rest of model.py defines, so that this file lints on its own.
import torch
# </check-only>
# ONNX's detection operators, as the runtime computes them (in double precision): RoiAlign and
# NonMaxSuppression.
try:  # torchvision's suppression kernel, where it is installed (the loop below does the same, slower)
    from torchvision.ops import nms as TORCHVISION_NMS
except ImportError:
    TORCHVISION_NMS = None


def onnx_roi_align(x, rois, batch_indices, mode, output_height, output_width, sampling_ratio, spatial_scale,
                   half_pixel):
    """ONNX's RoiAlign: each region of x (rois: [R, 4] as x1, y1, x2, y2) pooled into
    output_height x output_width bins, each the average (mode 'avg') or maximum ('max') of a grid of
    bilinear samples (sampling_ratio per side, or as many as the bin is wide where 0)."""
    planes = x.double()
    height, width = planes.shape[2], planes.shape[3]
    offset = 0.5 if half_pixel else 0.0
    pooled = []
    for roi, b in zip(rois.double().tolist(), batch_indices.tolist()):
        x0, y0 = roi[0] * spatial_scale - offset, roi[1] * spatial_scale - offset
        w, h = roi[2] * spatial_scale - offset - x0, roi[3] * spatial_scale - offset - y0
        if not half_pixel:
            w, h = max(w, 1.0), max(h, 1.0)
        grid_h = sampling_ratio if sampling_ratio > 0 else _ceil(h / output_height)
        grid_w = sampling_ratio if sampling_ratio > 0 else _ceil(w / output_width)
        if grid_h <= 0 or grid_w <= 0:  # an empty region: no samples
            pooled.append(planes.new_zeros(planes.shape[1], output_height, output_width))
            continue
        ys, ly, hy, y_low, y_high, y_inside = _bilinear_axis(y0, h / output_height, output_height, grid_h, height)
        xs, lx, hx, x_low, x_high, x_inside = _bilinear_axis(x0, w / output_width, output_width, grid_w, width)
        plane = planes[b]
        corners = torch.stack([hy[:, None] * hx[None, :] * plane[:, y_low][:, :, x_low],
                               hy[:, None] * lx[None, :] * plane[:, y_low][:, :, x_high],
                               ly[:, None] * hx[None, :] * plane[:, y_high][:, :, x_low],
                               ly[:, None] * lx[None, :] * plane[:, y_high][:, :, x_high]])
        corners = corners * (y_inside[:, None] & x_inside[None, :])  # a sample outside the image counts 0
        samples = corners.reshape(4, -1, output_height, grid_h, output_width, grid_w)
        if mode == 'avg':
            pooled.append(samples.sum(0).sum((2, 4)) / max(grid_h * grid_w, 1))
        else:
            pooled.append(samples.amax(0).amax((2, 4)))
    if not pooled:
        return x.new_zeros(0, x.shape[1], output_height, output_width)
    return torch.stack(pooled).to(x.dtype)


def _ceil(v):
    return int(torch.ceil(torch.tensor(v, dtype=torch.float64)))


def _bilinear_axis(start, bin_size, bins, grid, size):
    """One axis's sample positions for RoiAlign: the positions, their weights toward the upper and
    lower neighbour, both neighbours, and whether each lies on the image (within one pixel)."""
    steps = torch.arange(bins, dtype=torch.float64)[:, None] * bin_size
    within = (torch.arange(grid, dtype=torch.float64)[None, :] + 0.5) * bin_size / grid
    positions = (start + steps + within).reshape(-1)
    inside = (positions >= -1.0) & (positions <= size)
    positions = positions.clamp(min=0.0)
    low = positions.long()
    last = low >= size - 1
    low = torch.where(last, torch.full_like(low, size - 1), low)
    high = torch.where(last, low, low + 1)
    positions = torch.where(last, low.double(), positions)
    upper = positions - low.double()
    return positions, upper, 1.0 - upper, low, high, inside


def onnx_nms(boxes, scores, max_per_class, iou_threshold, score_threshold, center_point_box):
    """ONNX's NonMaxSuppression: for each batch and class, boxes in order of falling score (equal
    scores in their order), each kept unless it overlaps a kept one by more than iou_threshold,
    at most max_per_class of them; the kept ones as [batch, class, box] rows."""
    limit = int(max_per_class.reshape(-1)[0]) if max_per_class is not None and max_per_class.numel() else 0
    iou_max = float(iou_threshold.reshape(-1)[0]) if iou_threshold is not None and iou_threshold.numel() else 0.0
    score_given = score_threshold is not None and score_threshold.numel() > 0
    rows = []
    for b in range(boxes.shape[0] if limit > 0 else 0):
        corners = _corners(boxes[b].double(), center_point_box)
        for k in range(scores.shape[1]):
            s = scores[b, k].double()
            candidates = torch.arange(s.shape[0])
            if score_given:
                candidates = candidates[s > float(score_threshold.reshape(-1)[0])]
            order = candidates[torch.sort(s[candidates], descending=True, stable=True).indices]
            if TORCHVISION_NMS is not None:  # ranks for scores, so that equal scores keep this order
                ranked = corners[order]
                xy, ranks = _as_xy(ranked), -torch.arange(order.shape[0], dtype=torch.float64)
                kept = [chunk[TORCHVISION_NMS(xy[chunk], ranks[chunk], iou_max)]
                        for chunk in _apart(ranked, iou_max)]
                kept = torch.cat(kept).sort().values[:limit] if kept else torch.zeros(0, dtype=torch.int64)
                rows += [[b, k, int(i)] for i in order[kept]]
                continue
            alive = torch.ones(order.shape[0], dtype=torch.bool)
            kept = 0
            for i in range(order.shape[0]):
                if kept >= limit:
                    break
                if not alive[i]:
                    continue
                kept += 1
                rows.append([b, k, int(order[i])])
                alive[i + 1:] &= _iou(corners[order[i]], corners[order[i + 1:]]) <= iou_max
    return torch.tensor(rows, dtype=torch.int64).reshape(-1, 3)


def _apart(corners, iou_max, least=512):
    """The positions of `corners` in chunks of at least `least` (the last may be smaller) that
    suppression can take one at a time: sorted by top edge, a box whose top lies at or below
    every bottom before it meets none of them, so the boxes split there. torchvision's batched
    suppression, as exported, offsets each class's boxes apart, so its thousands of boxes split
    into classes instead of being compared pair by pair (SSD300: 870 ms in one call). Where a
    coordinate is not finite or the threshold is negative (a box apart exceeds it), one chunk."""
    n = corners.shape[0]
    if n <= least or iou_max < 0 or not bool(torch.isfinite(corners).all()):
        return [torch.arange(n)]
    by_top = torch.sort(corners[:, 0], stable=True).indices
    reach = torch.cummax(corners[by_top, 2], 0).values
    splits = (torch.nonzero(corners[by_top[1:], 0] >= reach[:-1]).flatten() + 1).tolist()
    chunks, start = [], 0
    for end in splits + [n]:
        if end - start >= least or end == n:
            chunks.append(by_top[start:end].sort().values)
            start = end
    return chunks


def _corners(boxes, center_point_box):
    """Boxes [N, 4] as y1, x1, y2, x2 with y1 <= y2 and x1 <= x2."""
    if center_point_box:
        x, y, w, h = boxes.unbind(1)
        return torch.stack([y - h / 2, x - w / 2, y + h / 2, x + w / 2], 1)
    y1, x1, y2, x2 = boxes.unbind(1)
    return torch.stack([torch.minimum(y1, y2), torch.minimum(x1, x2), torch.maximum(y1, y2), torch.maximum(x1, x2)], 1)


def _as_xy(corners):
    """y1, x1, y2, x2 as torchvision reads boxes, x1, y1, x2, y2 (the same overlaps)."""
    return corners[:, [1, 0, 3, 2]]


def _iou(box, others):
    """The intersection over union of one box with each of others (0 where they do not meet)."""
    ih = torch.minimum(box[2], others[:, 2]) - torch.maximum(box[0], others[:, 0])
    iw = torch.minimum(box[3], others[:, 3]) - torch.maximum(box[1], others[:, 1])
    inter = torch.where((ih > 0) & (iw > 0), ih * iw, torch.zeros_like(ih))
    union = (box[2] - box[0]) * (box[3] - box[1]) + (others[:, 2] - others[:, 0]) * (others[:, 3] - others[:, 1]) - inter
    return torch.where(union > 0, inter / union, torch.zeros_like(inter))
