#!/usr/bin/python3
"""Export real torchvision architectures to ONNX for Ramiel's tests and benchmarks.

Random weights (weights=None, seeded), batch 1, opset 13 (swin_t: opset 17 with a
symbolic batch dimension, so that its shape arithmetic reads the batch). Each model is written
atomically as OUT_DIR/<name>.onnx next to <name>.counts.json, which records what
the onnx package itself reports about the file (node, value and initializer
counts) so the C++ importer can be checked against it. Models already exported
are kept, so repeated test runs cost nothing. Beside each model, <name>.input.npy
and <name>.output.npy hold a seeded input and PyTorch's own output for it, the
reference the runtime is checked against.

Usage: /usr/bin/python3 export_models.py OUT_DIR [name ...]
(without names: the tests' models; EXTRA's are exported only when named)
"""
import inspect
import json
import os
import sys
import tempfile

MODELS = {
    # name: (constructor kwargs, input height/width[, opset, dynamic batch])
    "googlenet": (dict(aux_logits=False, init_weights=True), 224),
    "inception_v3": (dict(aux_logits=False, init_weights=True), 299),
    "squeezenet1_0": ({}, 224),
    "resnet18": ({}, 224),
    "densenet121": ({}, 224),
    "mobilenet_v2": ({}, 224),
    # A transformer whose shape arithmetic (Shape -> Gather -> Div -> Concat -> Reshape)
    # and attention mask (ScatterND) the fold-constants pass must see through.
    "swin_t": ({}, 224, 17, True),
}

# Exported only when named, for benchmarks beyond the tests' models (docs/performance.md:
# ConvNeXt's LayerNorm and GELU, EfficientNet's SiLU and squeeze-excite, channel shuffles,
# grouped and bottleneck convolutions, attention; some at opset 17, as a user may export them).
EXTRA = {
    "convnext_tiny": ({}, 224),
    "efficientnet_b0": ({}, 224),
    "mnasnet1_0": ({}, 224),
    "regnet_y_400mf": ({}, 224),
    "resnet50": ({}, 224),
    "shufflenet_v2_x1_0": ({}, 224),
    "mobilenet_v3_large": ({}, 224),
    "mobilenet_v3_small": ({}, 224),
    "resnext50_32x4d": ({}, 224),
    "alexnet": ({}, 224),
    "efficientnet_v2_s": ({}, 224),
    "maxvit_t": ({}, 224),
    "regnet_x_400mf": ({}, 224),
    "vit_b_16": ({}, 224, 17),
    "vgg11_bn": ({}, 224),
    "resnet34": ({}, 224, 17),
    "efficientnet_b1": ({}, 224, 17),
    "regnet_y_800mf": ({}, 224),
    "squeezenet1_1": ({}, 224),
    "shufflenet_v2_x0_5": ({}, 224),
    "mnasnet0_5": ({}, 224),
    "vit_b_32": ({}, 224),
    "wide_resnet50_2": ({}, 224, 17),
    "densenet161": ({}, 224),
    "efficientnet_b3": ({}, 224, 17),
    "regnet_y_1_6gf": ({}, 224, 17),
    "regnet_x_1_6gf": ({}, 224),
    "shufflenet_v2_x2_0": ({}, 224),
    "mnasnet1_3": ({}, 224, 17),
    "resnet101": ({}, 224),
    "vit_l_32": ({}, 224, 17),
    "resnet152": ({}, 224),
    "convnext_small": ({}, 224, 17),
    "efficientnet_b4": ({}, 224),
    "swin_s": ({}, 224, 17),
    "densenet201": ({}, 224, 17),
    "regnet_y_3_2gf": ({}, 224),
    "resnext101_32x8d": ({}, 224, 17),
    "resnext101_64x4d": ({}, 224),
    "shufflenet_v2_x1_5": ({}, 224),
    "mnasnet0_75": ({}, 224, 17),
    "densenet169": ({}, 224),
    "efficientnet_b2": ({}, 224, 17),
    "regnet_x_800mf": ({}, 224),
    "regnet_x_3_2gf": ({}, 224, 17),
    "regnet_y_8gf": ({}, 224),
    "efficientnet_v2_m": ({}, 224, 17),
    "convnext_base": ({}, 224),
    "vgg16": ({}, 224, 17),
    # The rest of torchvision's classifiers whose ONNX file fits protobuf's 2 GiB (vit_h_14 and
    # regnet_y_128gf do not), at 224x224 (Swin v2 at its own 256x256: see zeros_symbolic).
    "swin_v2_t": ({}, 256, 17),
    "swin_v2_s": ({}, 256, 17),
    "swin_v2_b": ({}, 256),
    "swin_b": ({}, 224, 17),
    "efficientnet_b5": ({}, 224),
    "efficientnet_b6": ({}, 224, 17),
    "efficientnet_b7": ({}, 224),
    "efficientnet_v2_l": ({}, 224, 17),
    "regnet_x_8gf": ({}, 224),
    "regnet_x_16gf": ({}, 224, 17),
    "regnet_x_32gf": ({}, 224),
    "regnet_y_16gf": ({}, 224, 17),
    "regnet_y_32gf": ({}, 224),
    "vgg13": ({}, 224),
    "vgg13_bn": ({}, 224, 17),
    "vgg16_bn": ({}, 224),
    "vgg19": ({}, 224, 17),
    "vgg19_bn": ({}, 224),
    "wide_resnet101_2": ({}, 224),
    "convnext_large": ({}, 224, 17),
    "vit_l_16": ({}, 224),
}


def onnx_counts(path):
    import onnx
    m = onnx.load(path)
    onnx.checker.check_model(m)
    g = m.graph
    names = set()
    names.update(i.name for i in g.input)
    names.update(o.name for o in g.output)
    names.update(t.name for t in g.initializer)
    for n in g.node:
        names.update(x for x in n.input if x)
        names.update(x for x in n.output if x)
    return {
        "nodes": len(g.node),
        "values": len(names),
        "initializers": len(g.initializer),
        "inputs": len(g.input),
        "outputs": len(g.output),
        "ops": sorted({n.op_type for n in g.node}),
    }


def torchscript_exporter(torch):
    """The export argument that keeps PyTorch 2.9 and later on the TorchScript-based
    exporter, which every model here was written with (their default became the
    torch.export-based one); nothing for the PyTorch of Debian 12, which has no other."""
    return {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters else {}


def zeros_symbolic(torch):
    """Swin v2 zeroes part of its qkv bias in place (Tensor.zero_), for which PyTorch 1.13's
    exporter has no symbolic (later ones write it as zeros_like): the same here."""
    def zero(g, self):
        return g.op("ConstantOfShape", g.op("Shape", self), value_t=torch.tensor([0.0]))
    torch.onnx.register_custom_op_symbolic("aten::zero", zero, 9)


def export(name, out_dir):
    path = os.path.join(out_dir, name + ".onnx")
    counts_path = os.path.join(out_dir, name + ".counts.json")
    input_path = os.path.join(out_dir, name + ".input.npy")
    output_path = os.path.join(out_dir, name + ".output.npy")
    if all(os.path.exists(p) for p in (path, counts_path, input_path, output_path)):
        return False
    import numpy as np
    import torch
    import torchvision
    spec = MODELS.get(name) or EXTRA[name]
    kwargs, hw = spec[:2]
    opset = spec[2] if len(spec) > 2 else 13
    dynamic = spec[3] if len(spec) > 3 else False
    if name.startswith("swin_v2"):
        zeros_symbolic(torch)
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None, **kwargs).eval()
    if hasattr(model, "heads"):  # a ViT's classifier starts at zero: every output would be 0
        torch.nn.init.normal_(model.heads.head.weight, std=0.02)
    x = torch.randn(1, 3, hw, hw)
    fd, tmp = tempfile.mkstemp(prefix=name, suffix=".onnx.tmp", dir=out_dir)
    os.close(fd)
    try:
        # Not under no_grad: there, an eval-mode ViT takes PyTorch's fused attention
        # (aten::_native_multi_head_attention), which has no ONNX export.
        torch.onnx.export(model, x, tmp, opset_version=opset,
                          input_names=["input"], output_names=["output"],
                          dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}} if dynamic else None,
                          **torchscript_exporter(torch))
        counts = onnx_counts(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    with open(counts_path + ".tmp", "w") as f:
        json.dump(counts, f, indent=1)
    os.replace(counts_path + ".tmp", counts_path)
    # A reference: another seeded input and PyTorch's output for it.
    torch.manual_seed(1)
    ref_in = torch.randn(1, 3, hw, hw)
    with torch.no_grad():
        ref_out = model(ref_in)
    for p, a in ((input_path, ref_in), (output_path, ref_out)):
        with open(p + ".tmp", "wb") as f:
            np.save(f, a.numpy())
        os.replace(p + ".tmp", p)
    return True


def main():
    if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
        print(__doc__, file=sys.stderr)
        return 2
    out_dir = sys.argv[1]
    names = sys.argv[2:] or list(MODELS)
    unknown = [n for n in names if n not in MODELS and n not in EXTRA]
    if unknown:
        print("export_models: unknown model(s): " + ", ".join(unknown), file=sys.stderr)
        return 2
    os.makedirs(out_dir, exist_ok=True)
    for name in names:
        made = export(name, out_dir)
        print(("exported " if made else "kept     ") + os.path.join(out_dir, name + ".onnx"), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
