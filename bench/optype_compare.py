#!/usr/bin/python3
"""Per operator type, Ramiel's `ramiel profile` node medians against ONNX Runtime's
per-op profile (bench/ort_profile.js or .py), in ms per run, on two thread counts (the
columns name them as the files say).
Usage: optype_compare.py OPTIMIZED.onnx RAMIEL_1T.json RAMIEL_PT.json ORT_1T.json ORT_PT.json"""
import json, sys, collections, onnx

opt, r1, r2, o1, o2 = sys.argv[1:6]
g = onnx.load(opt, load_external_data=False).graph
typ = {n.name: (n.op_type + ':' + next((a.s.decode() for a in n.attribute if a.name == 'activation'), '')).rstrip(':') for n in g.node}
def ramiel(path):
    j = json.load(open(path)); d = collections.Counter()
    for k, v in j['nodes'].items(): d[typ.get(k, '?')] += v * 1e3
    return d, j['median_total'] * 1e3, j.get('threads', '?')
def ort(path):
    j = json.load(open(path)); return collections.Counter(j['ops']), j['median_run_ms']
(ra, rat, ta), (rb, rbt, tb), (oa, oat), (ob, obt) = ramiel(r1), ramiel(r2), ort(o1), ort(o2)
print(f"{'op':28} {f'R {ta}t':>7} {f'R {tb}t':>7} {'R x':>5} | {'ORT op':24} {f'O {ta}t':>7} {f'O {tb}t':>7} {'O x':>5}")
rk = sorted(set(ra) | set(rb), key=lambda k: -ra[k]); ok = sorted(set(oa) | set(ob), key=lambda k: -oa[k])
for i in range(max(len(rk), len(ok))):
    left = f"{rk[i]:28} {ra[rk[i]]:7.2f} {rb[rk[i]]:7.2f} {ra[rk[i]] / max(rb[rk[i]], 1e-9):5.2f}" if i < len(rk) else ' ' * 50
    right = f"{ok[i]:24} {oa[ok[i]]:7.2f} {ob[ok[i]]:7.2f} {oa[ok[i]] / max(ob[ok[i]], 1e-9):5.2f}" if i < len(ok) else ''
    print(left, '|', right)
print(f"{'run (median)':28} {rat:7.2f} {rbt:7.2f} {rat / rbt:5.2f} | {'run (median)':24} {oat:7.2f} {obt:7.2f} {oat / obt:5.2f}")
print(f"{'node sum':28} {sum(ra.values()):7.2f} {sum(rb.values()):7.2f}       | {'node sum':24} {sum(oa.values()):7.2f} {sum(ob.values()):7.2f}")
