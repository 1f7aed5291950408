#!/usr/bin/python3
"""Writes the graph tst_tune tunes: four equal independent branches of 32 small
element-wise nodes on 16,384 floats (too few for ATen to split over threads),
joined by Adds. Usage: /usr/bin/python3 bench/four_branches.py OUT.onnx
Then: bash bench/tune_check.sh build OUT.onnx"""
import sys

import onnx
from onnx import TensorProto, helper

WIDTH, DEPTH = 16384, 32
nodes = []
for b in range(4):
    last = "x"
    for k in range(DEPTH):
        out = f"b{b}_{k}"
        nodes.append(helper.make_node("Tanh" if k % 2 else "Sigmoid", [last], [out], name=out))
        last = out
ends = [f"b{b}_{DEPTH - 1}" for b in range(4)]
nodes += [helper.make_node("Add", ends[:2], ["s01"], name="add01"),
          helper.make_node("Add", ends[2:], ["s23"], name="add23"),
          helper.make_node("Add", ["s01", "s23"], ["y"], name="add")]
graph = helper.make_graph(nodes, "four_branches",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, WIDTH])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, WIDTH])])
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), sys.argv[1])
