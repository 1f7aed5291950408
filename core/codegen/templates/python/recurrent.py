# <check-only> What the rest of model.py defines, so that this file lints on its own.
import functools
import threading

import torch
import torch.nn.functional as F
# </check-only>
# Recurrent layers (ONNX's LSTM, GRU and RNN) as PyTorch's own one-layer kernels: torch.lstm,
# torch.gru, torch.rnn_tanh and torch.rnn_relu. ONNX orders an LSTM's gates i, o, f, c and a
# GRU's z, r, h; PyTorch i, f, g, o and r, z, n. Each weight's gates are put in PyTorch's order
# once and kept (the entry holds the weights, so their ids stay theirs). What those kernels do not
# compute runs step by step (recurrent_steps).
RECURRENT_GATES = {'lstm': (0, 2, 3, 1), 'gru': (1, 0, 2), 'rnn_tanh': (0,), 'rnn_relu': (0,)}
_recurrent_params = {}
_recurrent_lock = threading.Lock()


def recurrent_params(kind, w, r, b):
    """[w_ih, w_hh, b_ih, b_hh] of each direction, gates in PyTorch's order."""
    key = (kind, id(w), id(r), id(b))
    with _recurrent_lock:
        entry = _recurrent_params.get(key)
    if entry is not None and entry[0] is w and entry[1] is r and entry[2] is b:
        return entry[3]
    gates = RECURRENT_GATES[kind]
    hidden = r.shape[-1]

    def reorder(t):  # t's rows, gate by gate
        return torch.cat([t[g * hidden:(g + 1) * hidden] for g in gates]).contiguous()

    params = []
    for d in range(w.shape[0]):
        bias = b[d] if b is not None else w.new_zeros(2 * len(gates) * hidden)
        params += [reorder(w[d]), reorder(r[d]), reorder(bias[:len(gates) * hidden]),
                   reorder(bias[len(gates) * hidden:])]
    with _recurrent_lock:
        _recurrent_params[key] = (w, r, b, params)
    return params


def recurrent(kind, x, w, r, b=None, sequence_lens=None, initial_h=None, initial_c=None):
    """ONNX's outputs of a forward or bidirectional layer: Y [sequence, directions, batch,
    hidden], Y_h [directions, batch, hidden] and (an LSTM's) Y_c, as PyTorch gives the last two."""
    params = recurrent_params(kind, w, r, b)
    directions, hidden = w.shape[0], r.shape[-1]
    h0 = initial_h if initial_h is not None else x.new_zeros(directions, x.shape[1], hidden)
    if kind == 'lstm':
        h0 = [h0, initial_c if initial_c is not None else torch.zeros_like(h0)]
    if sequence_lens is None:
        y, *last = getattr(torch, kind)(x, h0, params, True, 1, 0.0, False, directions == 2, False)
    else:
        y, *last = recurrent_packed(kind, x, sequence_lens, h0, params, directions == 2)
    return [y.reshape(x.shape[0], x.shape[1], directions, hidden).transpose(1, 2), *last]


def recurrent_packed(kind, x, lengths, h0, params, bidirectional):
    """Each row of x over its own length, as PyTorch's packed sequences run: Y [sequence, batch,
    directions * hidden], zero past the row's length, and the final states; a row of length 0
    never runs, its states are zero (as ONNX Runtime gives)."""
    empty = (lengths == 0).view(1, -1, 1)
    packed = torch.nn.utils.rnn.pack_padded_sequence(x, lengths.clamp(min=1).cpu(), enforce_sorted=False)
    order = packed.sorted_indices
    h0 = [h.index_select(1, order) for h in h0] if kind == 'lstm' else h0.index_select(1, order)
    y, *last = getattr(torch, kind)(packed.data, packed.batch_sizes, h0, params, True, 1, 0.0, False, bidirectional)
    y, _ = torch.nn.utils.rnn.pad_packed_sequence(
        torch.nn.utils.rnn.PackedSequence(y, packed.batch_sizes, order, packed.unsorted_indices),
        total_length=x.shape[0])
    last = [s.index_select(1, packed.unsorted_indices) for s in last]
    return [t.masked_fill(empty, 0.0) for t in [y, *last]]


def recurrent_steps(kind, direction, x, w, r, b=None, sequence_lens=None, initial_h=None, initial_c=None, p=None,
                    clip=None, activations=None, input_forget=False):
    """The outputs recurrent() gives, computed step by step as ONNX defines the cells, for what
    PyTorch's kernels do not compute: direction 'reverse', a GRU whose reset gate scales the state
    before its recurrent weights (kind 'gru_reset_first', ONNX's linear_before_reset 0), an
    LSTM's peepholes p, weights computed when the model runs, a clip of the gates' inputs,
    activations other than the defaults ([name, alpha, beta] for each function of each direction)
    and an LSTM's input_forget. A row past its sequence_lens keeps its states and gives zeros; in
    reverse it starts at its own last step."""
    steps, batch = x.shape[0], x.shape[1]
    hidden, width = r.shape[-1], w.shape[1]
    lengths = sequence_lens.long() if sequence_lens is not None else torch.full((batch,), steps, dtype=torch.long)
    running = (torch.arange(steps).unsqueeze(1) < lengths).unsqueeze(2)  # [steps, batch, 1]
    functions = len(RECURRENT_ACTIVATIONS_OF[kind])
    ys, hs, cs = [], [], []
    for d in range(w.shape[0]):
        reverse = direction == 'reverse' or d == 1
        bias = b[d] if b is not None else x.new_zeros(2 * width)
        xw = torch.matmul(reverse_within(x, lengths) if reverse else x, w[d].t()) + bias[:width]
        h = initial_h[d] if initial_h is not None else x.new_zeros(batch, hidden)
        c = initial_c[d] if initial_c is not None else torch.zeros_like(h)
        acts = RECURRENT_ACTIVATIONS_OF[kind] if activations is None else [
            functools.partial(recurrent_activation, *a) for a in activations[d * functions:(d + 1) * functions]]
        y = x.new_zeros(steps, batch, hidden)
        for t in range(steps):
            h_next, c_next = recurrent_step(kind, xw[t], h, c, r[d], bias[width:], p[d] if p is not None else None,
                                            acts, clip, input_forget)
            h, c = torch.where(running[t], h_next, h), torch.where(running[t], c_next, c)
            y[t] = h_next.masked_fill(~running[t], 0.0)
        ys.append(reverse_within(y, lengths) if reverse else y)
        hs.append(h)
        cs.append(c)
    empty = (lengths == 0).view(1, -1, 1)  # a row of length 0 never ran: its states are zero
    states = [torch.stack(hs), torch.stack(cs)] if kind == 'lstm' else [torch.stack(hs)]
    return [torch.stack(ys, 1), *[s.masked_fill(empty, 0.0) for s in states]]


# Each kind's activation functions by default: an LSTM's f, g, h, a GRU's f, g, an RNN's f.
RECURRENT_ACTIVATIONS_OF = {
    'lstm': (torch.sigmoid, torch.tanh, torch.tanh), 'gru': (torch.sigmoid, torch.tanh),
    'gru_reset_first': (torch.sigmoid, torch.tanh), 'rnn_tanh': (torch.tanh,), 'rnn_relu': (torch.relu,)}


def recurrent_activation(name, alpha, beta, v):
    """ONNX's activation function `name` (lower case) of a recurrent layer, with its alpha and beta."""
    if name == 'affine':
        return alpha * v + beta
    if name == 'leakyrelu':
        return F.leaky_relu(v, alpha)
    if name == 'thresholdedrelu':
        return torch.where(v > alpha, v, torch.zeros_like(v))
    if name == 'scaledtanh':
        return alpha * torch.tanh(beta * v)
    if name == 'hardsigmoid':
        return (alpha * v + beta).clamp(0, 1)
    if name == 'elu':
        return F.elu(v, alpha)
    if name == 'softsign':
        return F.softsign(v)
    if name == 'softplus':
        return F.softplus(v)
    return {'relu': torch.relu, 'tanh': torch.tanh, 'sigmoid': torch.sigmoid}[name](v)


def recurrent_step(kind, xw, h, c, r, rb, p, acts, clip, input_forget):
    """One step of ONNX's cell: the next h and c (an LSTM's; c as given for the others) from the
    input's projection xw (its bias added), the recurrent weights r and their bias rb, in ONNX's
    gate order (LSTM i, o, f, c; GRU z, r, h), with the activation functions acts, each gate's
    input clipped to [-clip, clip] where clip is given, and an LSTM's forget gate 1 - i where
    input_forget."""
    hidden = h.shape[-1]
    f = acts[0]
    gate = (lambda v: v.clamp(-clip, clip)) if clip else (lambda v: v)
    if kind == 'gru_reset_first':
        z, reset = f(gate(xw[:, :2 * hidden] + h @ r[:2 * hidden].t() + rb[:2 * hidden])).chunk(2, 1)
        n = acts[1](gate(xw[:, 2 * hidden:] + (reset * h) @ r[2 * hidden:].t() + rb[2 * hidden:]))
        return (1 - z) * n + z * h, c
    hr = h @ r.t() + rb
    if kind == 'gru':
        z, reset = f(gate(xw[:, :2 * hidden] + hr[:, :2 * hidden])).chunk(2, 1)
        n = acts[1](gate(xw[:, 2 * hidden:] + reset * hr[:, 2 * hidden:]))
        return (1 - z) * n + z * h, c
    if kind == 'lstm':
        i, o, forget, g = (xw + hr).chunk(4, 1)
        pi, po, pf = p.chunk(3) if p is not None else (0.0, 0.0, 0.0)
        i = f(gate(i + pi * c))
        forget = 1 - i if input_forget else f(gate(forget + pf * c))
        c = forget * c + i * acts[1](gate(g))
        return f(gate(o + po * c)) * acts[2](c), c
    return f(gate(xw + hr)), c


def reverse_within(x, lengths):
    """x [steps, batch, ...] with each row's first lengths[row] steps in reverse order (ONNX's
    ReverseSequence; a reverse recurrent layer's input and output)."""
    t, lengths = torch.arange(x.shape[0]).unsqueeze(1), lengths.long()
    return x[torch.where(t < lengths, lengths - 1 - t, t), torch.arange(x.shape[1])]


def recurrent_batch_first(outputs):
    """A layer's outputs in ONNX's layout 1: Y [batch, sequence, directions, hidden], the states
    [batch, directions, hidden] (the layer ran on the input and states transposed)."""
    y, *states = outputs
    return [y.permute(2, 0, 1, 3), *[s.transpose(0, 1) for s in states]]
