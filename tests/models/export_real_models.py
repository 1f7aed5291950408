#!/usr/bin/python3
"""Export real models beyond classification to ONNX for tst_real_models.

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
- Video classifiers (torchvision.models.video), opset 17: s3d on 1x3x16x224x224 (the
  smallest clip its last pooling takes), r2plus1d_18 on 1x3x8x64x64; <name>.onnx,
  <name>.input.npy, <name>.output.npy. Their convolutions are factorized (1xkxk and kx1x1)
  and S3D has 3-D max pooling.
- Recurrent layers, PyTorch's nn.LSTM, nn.GRU and nn.RNN as ONNX's LSTM, GRU and RNN;
  <name>.onnx, <name>.input_<i>.npy and PyTorch's <name>.output_<i>.npy for every input
  and output. sequence_tagger (opset 17): a 2-layer bidirectional LSTM, a bidirectional
  GRU and a ReLU RNN beside each other on one batch-first input of 3 sequences of 20
  steps, their outputs concatenated into a linear layer. packed_sequences (opset 14):
  a bidirectional LSTM and GRU on a batch of 9 sequences of 1 to 7 steps padded to 7
  (pack_padded_sequence: ONNX's sequence_lens, reverse directions starting at each
  sequence's own end), the padded outputs and both final hidden states.
- causal_lm (opset 14): a small causal transformer language model of PyTorch's layers
  (token and position embeddings, two pre-norm encoder layers with GELU under a causal
  mask that torch.triu builds in the graph, a final LayerNorm and vocabulary head), on 16
  tokens; its outputs are the log-probabilities (LogSoftmax) and the next token of each
  position (ArgMax). <name>.input_0.npy (int64 ids), <name>.output_0.npy, .output_1.npy.

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


def one_input_files(out_dir, name):
    """<name>.onnx, <name>.input.npy and <name>.output.npy in out_dir, or None where all three
    are there already."""
    base = os.path.join(out_dir, name)
    files = [base + s for s in (".onnx", ".input.npy", ".output.npy")]
    return None if all(os.path.exists(p) for p in files) else files


def export_one_input(model, x, files):
    """Exports `model` on its one input `x` as files[0], with x and PyTorch's output as files[1]
    and files[2]."""
    import torch
    with torch.no_grad():
        ref = model(x)
    export_onnx(model, (x,), files[0], input_names=["input"], output_names=["output"])
    save_npy(files[1], x.numpy())
    save_npy(files[2], ref.numpy())
    return True


def export_segmenter(out_dir):
    files = one_input_files(out_dir, SEGMENTER)
    if files is None:
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
    return export_one_input(wrapped, torch.randn(1, 3, 224, 224), files)


def export_video(out_dir, name, frames, size):
    files = one_input_files(out_dir, name)
    if files is None:
        return False
    import torch
    import torchvision
    torch.manual_seed(0)
    model = getattr(torchvision.models.video, name)(weights=None).eval()
    torch.manual_seed(1)
    return export_one_input(model, torch.randn(1, 3, frames, size, size), files)


def export_sequence_model(out_dir, name, model, inputs, input_names, output_names, opset):
    base = os.path.join(out_dir, name)
    files = ([base + ".onnx"] + [f"{base}.input_{i}.npy" for i in range(len(inputs))] +
             [f"{base}.output_{i}.npy" for i in range(len(output_names))])
    if all(os.path.exists(p) for p in files):
        return False
    import torch
    with torch.no_grad():
        ref = model(*inputs)
    ref = ref if isinstance(ref, tuple) else (ref,)
    fd, tmp = tempfile.mkstemp(prefix=name, suffix=".tmp", dir=out_dir)
    os.close(fd)
    try:
        with torch.no_grad():
            torch.onnx.export(model, inputs, tmp, opset_version=opset, input_names=input_names,
                              output_names=output_names)
        os.replace(tmp, files[0])
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    for i, x in enumerate(inputs):
        save_npy(f"{base}.input_{i}.npy", x.numpy())
    for i, y in enumerate(ref):
        save_npy(f"{base}.output_{i}.npy", y.numpy())
    return True


def sequence_tagger():
    """The tagger (seeded, in eval mode): on [batch, steps, 40] features, [batch, steps, 10] scores."""
    import torch

    class Tagger(torch.nn.Module):
        def __init__(self, features=40, hidden=64):
            super().__init__()
            self.lstm = torch.nn.LSTM(features, hidden, num_layers=2, bidirectional=True, batch_first=True)
            self.gru = torch.nn.GRU(features, hidden, bidirectional=True, batch_first=True)
            self.rnn = torch.nn.RNN(features, hidden // 2, nonlinearity="relu", batch_first=True)
            self.head = torch.nn.Linear(4 * hidden + hidden // 2, 10)

        def forward(self, x):
            a, _ = self.lstm(x)
            b, _ = self.gru(x)
            c, _ = self.rnn(x)
            return self.head(torch.cat([a, b, c], -1))

    torch.manual_seed(0)
    return Tagger().eval()


def export_sequence_tagger(out_dir):
    import torch
    model = sequence_tagger()
    return export_sequence_model(out_dir, SEQUENCE_TAGGER, model, (torch.randn(3, 20, 40),), ["x"], ["y"], 17)


def export_packed_sequences(out_dir):
    import torch
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

    class Packed(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = torch.nn.LSTM(8, 16, bidirectional=True)
            self.gru = torch.nn.GRU(8, 16, bidirectional=True)

        def forward(self, x, lengths):
            a, (h, _) = self.lstm(pack_padded_sequence(x, lengths, enforce_sorted=False))
            a, _ = pad_packed_sequence(a, total_length=x.shape[0])
            b, hg = self.gru(pack_padded_sequence(x, lengths, enforce_sorted=False))
            b, _ = pad_packed_sequence(b, total_length=x.shape[0])
            return torch.cat([a, b], -1), h, hg

    torch.manual_seed(0)
    model = Packed().eval()
    inputs = (torch.randn(7, 9, 8), torch.tensor([7, 4, 2, 7, 1, 5, 3, 6, 7]))
    return export_sequence_model(out_dir, PACKED_SEQUENCES, model, inputs, ["x", "lengths"], ["y", "h", "hg"], 14)


def export_causal_lm(out_dir):
    import torch

    class CausalLM(torch.nn.Module):
        def __init__(self, vocabulary=100, width=32, heads=4, layers=2, tokens=16):
            super().__init__()
            self.token = torch.nn.Embedding(vocabulary, width)
            self.position = torch.nn.Embedding(tokens, width)
            layer = torch.nn.TransformerEncoderLayer(width, heads, 2 * width, dropout=0.0, activation="gelu",
                                                     batch_first=True, norm_first=True)
            self.encoder = torch.nn.TransformerEncoder(layer, layers)
            self.norm = torch.nn.LayerNorm(width)
            self.head = torch.nn.Linear(width, vocabulary)

        def forward(self, ids):
            steps = ids.shape[1]
            mask = torch.triu(torch.full((steps, steps), float("-inf")), diagonal=1)
            h = self.encoder(self.token(ids) + self.position(torch.arange(steps)), mask=mask)
            log_probabilities = torch.log_softmax(self.head(self.norm(h)), dim=-1)
            return log_probabilities, torch.argmax(log_probabilities, dim=-1)

    torch.manual_seed(0)
    model = CausalLM().eval()
    ids = torch.randint(0, 100, (1, 16))
    return export_sequence_model(out_dir, CAUSAL_LM, model, (ids,), ["ids"], ["log_probabilities", "next"], 14)


SEQUENCE_TAGGER = "sequence_tagger"
PACKED_SEQUENCES = "packed_sequences"
CAUSAL_LM = "causal_lm"
EXPORTERS = {DETECTOR: export_detector, SEGMENTER: export_segmenter, SEQUENCE_TAGGER: export_sequence_tagger,
             PACKED_SEQUENCES: export_packed_sequences, CAUSAL_LM: export_causal_lm,
             "s3d": lambda out_dir: export_video(out_dir, "s3d", 16, 224),
             "r2plus1d_18": lambda out_dir: export_video(out_dir, "r2plus1d_18", 8, 64)}


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
