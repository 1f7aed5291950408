#!/usr/bin/python3
"""Write the recurrent models docs/performance.md times against ONNX Runtime into OUT_DIR
(random weights, seeded; files already there are kept):

- tagger_b1_t50, tagger_b3_t20: PyTorch's 2-layer bidirectional LSTM, bidirectional GRU
  and ReLU RNN beside each other on 40 features, their outputs concatenated into a linear
  layer (tests/models/export_real_models.py's sequence_tagger), exported at opset 17
  for 1 sequence of 50 steps and 3 of 20.
- lstm_bi_40x64_t50: one bidirectional LSTM node, 40 -> 64 units, 1 sequence of 50 steps.
- lstm_bi_256x512_t100: one bidirectional LSTM node, 256 -> 512 units, 1 sequence of 100
  steps (4 MiB of recurrent weights a direction: the product of every step from memory).
- gru_128x256_t50_b8: one GRU node (linear_before_reset, as PyTorch's), 128 -> 256 units,
  8 sequences of 50 steps (the states' product a GEMM).

Usage: /usr/bin/python3 bench/recurrent_models.py OUT_DIR
"""
import os
import sys


def tagger(out_dir, name, batch, steps):
    import torch
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "models"))
    from export_real_models import sequence_tagger
    with torch.no_grad():
        torch.onnx.export(sequence_tagger(), (torch.randn(batch, steps, 40),), os.path.join(out_dir, name + ".onnx"),
                          opset_version=17, input_names=["x"], output_names=["y"])


def one_node(out_dir, name, op, features, hidden, steps, batch, direction, **attributes):
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper, TensorProto
    gates = {"LSTM": 4, "GRU": 3, "RNN": 1}[op]
    directions = 2 if direction == "bidirectional" else 1
    rng = np.random.default_rng(0)

    def weights(name, *shape):
        return numpy_helper.from_array((rng.standard_normal(shape) * 0.1).astype(np.float32), name)

    initializers = [weights("W", directions, gates * hidden, features), weights("R", directions, gates * hidden, hidden),
                    weights("B", directions, 2 * gates * hidden)]
    node = helper.make_node(op, ["X", "W", "R", "B"], ["Y", "Y_h"], hidden_size=hidden, direction=direction, **attributes)
    graph = helper.make_graph([node], name, [helper.make_tensor_value_info("X", TensorProto.FLOAT, [steps, batch, features])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [steps, directions, batch, hidden]),
                               helper.make_tensor_value_info("Y_h", TensorProto.FLOAT, [directions, batch, hidden])],
                              initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out_dir, name + ".onnx"))


MODELS = {
    "tagger_b1_t50": lambda d: tagger(d, "tagger_b1_t50", 1, 50),
    "tagger_b3_t20": lambda d: tagger(d, "tagger_b3_t20", 3, 20),
    "lstm_bi_40x64_t50": lambda d: one_node(d, "lstm_bi_40x64_t50", "LSTM", 40, 64, 50, 1, "bidirectional"),
    "lstm_bi_256x512_t100": lambda d: one_node(d, "lstm_bi_256x512_t100", "LSTM", 256, 512, 100, 1, "bidirectional"),
    "gru_128x256_t50_b8": lambda d: one_node(d, "gru_128x256_t50_b8", "GRU", 128, 256, 50, 8, "forward",
                                             linear_before_reset=1),
}


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    for name, write in MODELS.items():
        path = os.path.join(out_dir, name + ".onnx")
        if not os.path.exists(path):
            write(out_dir)
        print(path, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
