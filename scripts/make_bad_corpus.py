#!/usr/bin/python3
"""Generate tests/data/bad/: ONNX files that Ramiel must reject with a clear error.

Each file is small and deterministic; tests/tst_bad_inputs.cpp lists the error
kind and message expected for each. Regenerate with:

    /usr/bin/python3 scripts/make_bad_corpus.py tests/data/bad resources/models/inception_sample.onnx
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def tiny_model(nodes, inputs=("x",), outputs=("y",), inits=()):
    graph = helper.make_graph(
        nodes, "bad",
        [helper.make_tensor_value_info(i, TensorProto.FLOAT, [2, 3]) for i in inputs],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, [2, 3]) for o in outputs],
        list(inits))
    model = helper.make_model(graph, producer_name="ramiel-bad-corpus",
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    return model


def save(model, path):
    with open(path, "wb") as f:
        f.write(model.SerializeToString())


def external_weight(location):
    w = numpy_helper.from_array(np.ones((2, 3), dtype=np.float32), "w")
    w.ClearField("raw_data")
    w.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", "0"), ("length", "24")):
        entry = w.external_data.add()
        entry.key, entry.value = key, value
    return w


def main(out_dir, sample):
    os.makedirs(out_dir, exist_ok=True)
    p = lambda name: os.path.join(out_dir, name)

    open(p("empty.onnx"), "wb").close()
    with open(p("random_bytes.onnx"), "wb") as f:
        f.write(np.random.RandomState(7).bytes(1024))
    with open(p("text_file.onnx"), "wb") as f:
        f.write(b"this is not a model\n")
    data = open(sample, "rb").read()
    with open(p("truncated.onnx"), "wb") as f:
        f.write(data[: len(data) * 3 // 5])

    # A graph output nothing produces... and nodes that read a value nobody writes.
    save(tiny_model([helper.make_node("Relu", ["ghost"], ["y"], name="reads_ghost")]), p("undefined_value.onnx"))
    # y = Relu(Add(x, y)): a cycle through two nodes.
    save(tiny_model([helper.make_node("Add", ["x", "y"], ["s"], name="add"),
                     helper.make_node("Relu", ["s"], ["y"], name="relu")]), p("cyclic.onnx"))
    # Two nodes writing the same value.
    save(tiny_model([helper.make_node("Relu", ["x"], ["y"], name="first"),
                     helper.make_node("Neg", ["x"], ["y"], name="second")]), p("two_producers.onnx"))
    # One node writing the same value as two of its outputs (found by tests/fuzz: the parallel
    # executor and the serial one disagreed on which of the two the value held).
    save(tiny_model([helper.make_node("Split", ["x"], ["y", "y"], name="split", axis=0)]), p("one_node_writes_twice.onnx"))
    # A graph with no nodes.
    save(tiny_model([], outputs=("x",)), p("empty_graph.onnx"))
    # External data whose file is missing, and one that points outside the model's folder.
    save(tiny_model([helper.make_node("Add", ["x", "w"], ["y"], name="add")], inits=[external_weight("missing_weights.bin")]),
         p("missing_external_data.onnx"))
    save(tiny_model([helper.make_node("Add", ["x", "w"], ["y"], name="add")], inits=[external_weight("../../../etc/passwd")]),
         p("external_data_outside.onnx"))
    # An initializer whose data does not match its shape.
    bad = numpy_helper.from_array(np.ones((2,), dtype=np.float32), "w")
    bad.dims[:] = [2, 3]
    save(tiny_model([helper.make_node("Add", ["x", "w"], ["y"], name="add")], inits=[bad]), p("short_initializer.onnx"))

    # ONNX's conformance Scan model without its required num_scan_inputs attribute: ONNX 1.12's
    # shape inference dereferences null on it (found by tests/fuzz). It must load, with a warning.
    scan = onnx.load("/usr/share/libonnx-testdata/data/node/test_scan_sum/model.onnx")
    attrs = [a for a in scan.graph.node[0].attribute if a.name != "num_scan_inputs"]
    del scan.graph.node[0].attribute[:]
    scan.graph.node[0].attribute.extend(attrs)
    save(scan, p("scan_missing_attribute.onnx"))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    main(sys.argv[1], sys.argv[2])
