#!/usr/bin/python3
"""Generate Ramiel's bundled sample: a small Inception-style network.

Deterministic (fixed seed, fixed structure), about 60 KB, with real weights so
it can be run. Two Inception blocks with four parallel branches each give the
graph real task parallelism to find. Regenerate with:

    /usr/bin/python3 scripts/make_sample_model.py resources/models/inception_sample.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.RandomState(20261130)
nodes, inits = [], []


def weight(name, shape, scale=None):
    fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
    scale = scale if scale is not None else (2.0 / fan_in) ** 0.5
    inits.append(numpy_helper.from_array((rng.randn(*shape) * scale).astype(np.float32), name))
    return name


def conv_relu(prefix, x, cin, cout, k, stride=1, bn=False):
    w = weight(prefix + ".weight", [cout, cin, k, k])
    inputs = [x, w] if bn else [x, w, weight(prefix + ".bias", [cout], 0.01)]
    y = prefix + ".conv"
    nodes.append(helper.make_node("Conv", inputs, [y], name=prefix + "/Conv",
                                  kernel_shape=[k, k], strides=[stride, stride], pads=[k // 2] * 4))
    if bn:
        params = [weight(prefix + ".bn.scale", [cout], 0.1), weight(prefix + ".bn.bias", [cout], 0.1),
                  weight(prefix + ".bn.mean", [cout], 0.1)]
        inits.append(numpy_helper.from_array((1.0 + rng.rand(cout)).astype(np.float32), prefix + ".bn.var"))
        params.append(prefix + ".bn.var")
        nodes.append(helper.make_node("BatchNormalization", [y] + params, [prefix + ".bn"],
                                      name=prefix + "/BatchNormalization", epsilon=1e-5))
        y = prefix + ".bn"
    out = prefix + ".relu"
    nodes.append(helper.make_node("Relu", [y], [out], name=prefix + "/Relu"))
    return out


def inception(prefix, x, cin, c1, c3r, c3, c5r, c5, cp):
    b1 = conv_relu(prefix + "/branch1", x, cin, c1, 1)
    b2 = conv_relu(prefix + "/branch2b", conv_relu(prefix + "/branch2a", x, cin, c3r, 1), c3r, c3, 3)
    b3a = conv_relu(prefix + "/branch3a", x, cin, c5r, 1)
    b3 = conv_relu(prefix + "/branch3c", conv_relu(prefix + "/branch3b", b3a, c5r, c5, 3), c5, c5, 3)
    pool = prefix + "/branch4.pool"
    nodes.append(helper.make_node("MaxPool", [x], [pool], name=prefix + "/branch4/MaxPool",
                                  kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1]))
    b4 = conv_relu(prefix + "/branch4", pool, cin, cp, 1)
    out = prefix + ".concat"
    nodes.append(helper.make_node("Concat", [b1, b2, b3, b4], [out], name=prefix + "/Concat", axis=1))
    return out, c1 + c3 + c5 + cp


def main(path):
    x = conv_relu("stem", "image", 3, 24, 3, stride=2, bn=True)
    nodes.append(helper.make_node("MaxPool", [x], ["stem.pool"], name="stem/MaxPool",
                                  kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]))
    x, c = inception("block1", "stem.pool", 24, 16, 16, 24, 8, 12, 8)
    x, c = inception("block2", x, c, 24, 24, 32, 8, 16, 16)
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["gap"], name="head/GlobalAveragePool"))
    nodes.append(helper.make_node("Flatten", ["gap"], ["flat"], name="head/Flatten", axis=1))
    nodes.append(helper.make_node("Gemm", ["flat", weight("head.fc.weight", [10, c]), weight("head.fc.bias", [10], 0.01)],
                                  ["logits"], name="head/Gemm", transB=1))
    graph = helper.make_graph(
        nodes, "inception_sample",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 64, 64])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 10])],
        inits)
    model = helper.make_model(graph, producer_name="ramiel-sample", producer_version="1",
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    model.doc_string = "Ramiel's bundled sample: a small Inception-style network with random weights."
    onnx.checker.check_model(model)
    onnx.save(model, path)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    main(sys.argv[1])
