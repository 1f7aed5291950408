#!/usr/bin/python3
"""Export a torchvision detector and a segmentation model to ONNX for tst_real_models.

Random weights (weights=None, weights_backbone=None, seeded); the backbones' batch
norms are calibrated on random images first (one training-mode pass, momentum 1), so
that activations keep their scale and the heads see features that differ from box to
box: otherwise every proposal gets the same score and which 100 survive is a tie.

- fasterrcnn_mobilenet_v3_large_320_fpn, opset 17, one 3x320x320 image: the size the
  model works at, so nothing is resized or padded (a zero-padded border gives anchors of
  equal objectness, and which of them the RPN keeps is a tie that PyTorch and ONNX
  Runtime break differently); box_score_thresh 0.5, so about 30 boxes survive. Writes <name>.onnx, <name>.input.npy and PyTorch's <name>.boxes.npy,
  <name>.labels.npy, <name>.scores.npy.
- lraspp_mobilenet_v3_large, opset 17, 1x3x224x224; <name>.onnx, <name>.input.npy,
  <name>.output.npy (the "out" map).

Files already there are kept, so repeated test runs cost nothing.

Usage: /usr/bin/python3 export_real_models.py OUT_DIR [name ...]
"""
import os
import sys
import tempfile

DETECTOR = "fasterrcnn_mobilenet_v3_large_320_fpn"
SEGMENTER = "lraspp_mobilenet_v3_large"


def save_npy(path, array):
    import numpy as np
    with open(path + ".tmp", "wb") as f:
        np.save(f, array)
    os.replace(path + ".tmp", path)


def calibrate_batch_norms(module, x):
    import torch
    for m in module.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.momentum = 1.0
    module.train()
    with torch.no_grad():
        module(x)
    module.eval()


def export_onnx(model, args, path, **kwargs):
    import torch
    out_dir = os.path.dirname(path)
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path), suffix=".tmp", dir=out_dir)
    os.close(fd)
    try:
        with torch.no_grad():
            torch.onnx.export(model, args, tmp, opset_version=17, **kwargs)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def export_detector(out_dir):
    base = os.path.join(out_dir, DETECTOR)
    files = [base + s for s in (".onnx", ".input.npy", ".boxes.npy", ".labels.npy", ".scores.npy")]
    if all(os.path.exists(p) for p in files):
        return False
    import torch
    import torchvision
    torch.manual_seed(0)
    model = torchvision.models.detection.fasterrcnn_mobilenet_v3_large_320_fpn(
        weights=None, weights_backbone=None, box_score_thresh=0.5).eval()
    calibrate_batch_norms(model.backbone, torch.randn(2, 3, 320, 320))
    # Spread the class scores (a random head gives nearly uniform ones) but keep them off
    # 0 and 1: saturated scores are ties, and NMS and TopK break ties by index order,
    # which PyTorch does not promise.
    with torch.no_grad():
        model.roi_heads.box_predictor.cls_score.weight.normal_(0, 0.03)
    torch.manual_seed(1)
    image = torch.rand(3, 320, 320)
    with torch.no_grad():
        ref = model([image])[0]
    export_onnx(model, ([image],), files[0], input_names=["image"], output_names=["boxes", "labels", "scores"])
    save_npy(files[1], image.numpy())
    for path, key in zip(files[2:], ("boxes", "labels", "scores")):
        save_npy(path, ref[key].numpy())
    return True


def export_segmenter(out_dir):
    base = os.path.join(out_dir, SEGMENTER)
    files = [base + s for s in (".onnx", ".input.npy", ".output.npy")]
    if all(os.path.exists(p) for p in files):
        return False
    import torch
    import torchvision

    class OutOnly(torch.nn.Module):  # the model returns a dict; ONNX gets its "out"
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, x):
            return self.m(x)["out"]

    torch.manual_seed(0)
    model = torchvision.models.segmentation.lraspp_mobilenet_v3_large(weights=None, weights_backbone=None).eval()
    calibrate_batch_norms(model.backbone, torch.randn(2, 3, 224, 224))
    wrapped = OutOnly(model).eval()
    torch.manual_seed(1)
    x = torch.randn(1, 3, 224, 224)
    with torch.no_grad():
        ref = wrapped(x)
    export_onnx(wrapped, (x,), files[0], input_names=["input"], output_names=["output"])
    save_npy(files[1], x.numpy())
    save_npy(files[2], ref.numpy())
    return True


EXPORTERS = {DETECTOR: export_detector, SEGMENTER: export_segmenter}


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    out_dir = sys.argv[1]
    names = sys.argv[2:] or list(EXPORTERS)
    unknown = [n for n in names if n not in EXPORTERS]
    if unknown:
        print("export_real_models: unknown model(s): " + ", ".join(unknown), file=sys.stderr)
        return 2
    os.makedirs(out_dir, exist_ok=True)
    for name in names:
        made = EXPORTERS[name](out_dir)
        print(("exported " if made else "kept     ") + os.path.join(out_dir, name + ".onnx"), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
