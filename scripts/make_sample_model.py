#!/usr/bin/python3
"""Generate Ramiel's bundled sample: a small Inception-style network for teaching.

Deterministic (fixed seed, fixed structure), about 400 KB, with real weights so
it can be run. Two Inception blocks of four branches each give the graph real
task parallelism: each branch is a 1x1 reduction and three 3x3 convolutions
(the last branch behind a max pool), so the branches cost the same and are
heavy enough at 80x80 that two workers beat one core clearly. Few channels
keep the file small: weights cost bytes, the spatial size costs only compute.
Regenerate with:

    /usr/bin/python3 scripts/make_sample_model.py resources/models/inception_sample.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SIZE = 80       # input height and width; every block works at this size
CHANNELS = 20   # per branch
rng = np.random.RandomState(20261130)
nodes, inits = [], []


def weight(name, shape, scale=None):
    fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
    scale = scale if scale is not None else (2.0 / fan_in) ** 0.5
    inits.append(numpy_helper.from_array((rng.randn(*shape) * scale).astype(np.float32), name))
    return name


def conv_relu(prefix, x, cin, cout, kh, kw=None, bn=False):
    kw = kh if kw is None else kw
    w = weight(prefix + ".weight", [cout, cin, kh, kw])
    inputs = [x, w] if bn else [x, w, weight(prefix + ".bias", [cout], 0.01)]
    y = prefix + ".conv"
    nodes.append(helper.make_node("Conv", inputs, [y], name=prefix + "/Conv", kernel_shape=[kh, kw],
                                  pads=[kh // 2, kw // 2, kh // 2, kw // 2]))
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


def chain(prefix, x, cin, c, kernels):
    """A 1x1 reduction, then one conv per (kh, kw) in `kernels`: one branch."""
    x = conv_relu(prefix + "/reduce", x, cin, c, 1)
    for i, (kh, kw) in enumerate(kernels):
        x = conv_relu("%s/conv%d" % (prefix, i + 1), x, c, c, kh, kw)
    return x


def inception(prefix, x, cin, c):
    # Four branches of the same convolutions (a 1x1 reduction, three 3x3), the
    # last behind a max pool: the same cost each, whatever the machine.
    b1 = chain(prefix + "/branch1", x, cin, c, [(3, 3)] * 3)
    b2 = chain(prefix + "/branch2", x, cin, c, [(3, 3)] * 3)
    b3 = chain(prefix + "/branch3", x, cin, c, [(3, 3)] * 3)
    pool = prefix + "/branchpool.pool"
    nodes.append(helper.make_node("MaxPool", [x], [pool], name=prefix + "/branchpool/MaxPool",
                                  kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1]))
    b4 = chain(prefix + "/branchpool", pool, cin, c, [(3, 3)] * 3)
    out = prefix + ".concat"
    nodes.append(helper.make_node("Concat", [b1, b2, b3, b4], [out], name=prefix + "/Concat", axis=1))
    return out, 4 * c


def main(path):
    x = conv_relu("stem", "image", 3, CHANNELS, 3, bn=True)
    x, c = inception("block1", x, CHANNELS, CHANNELS)
    x, c = inception("block2", x, c, CHANNELS)
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["gap"], name="head/GlobalAveragePool"))
    nodes.append(helper.make_node("Flatten", ["gap"], ["flat"], name="head/Flatten", axis=1))
    nodes.append(helper.make_node("Gemm", ["flat", weight("head.fc.weight", [10, c]), weight("head.fc.bias", [10], 0.01)],
                                  ["logits"], name="head/Gemm", transB=1))
    graph = helper.make_graph(
        nodes, "inception_sample",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, SIZE, SIZE])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 10])],
        inits)
    model = helper.make_model(graph, producer_name="ramiel-sample", producer_version="2",
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    model.doc_string = ("Ramiel's bundled sample: a small Inception-style network with random weights and four "
                        "balanced branches per block.")
    onnx.checker.check_model(model)
    onnx.save(model, path)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    main(sys.argv[1])
