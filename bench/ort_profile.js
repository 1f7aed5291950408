// ONNX Runtime's time per operator type, for comparing with `ramiel profile`:
// one session with profiling on (sequential, all graph optimizations), RUNS
// timed runs after 3 warm-ups; prints JSON {op: ms per run} (sum over the
// op's nodes, median over runs), each node's median and the median run.
// The first input: random floats of the sizes given, or a .npy file's data.
// Usage: NODE_PATH=build/ort/node_modules node bench/ort_profile.js MODEL.onnx RUNS 1,3,224,224|INPUT.npy THREADS
const ort = require('onnxruntime-node');
const fs = require('fs');
const os = require('os');
const path = require('path');
const {inputOf} = require(path.join(__dirname, '../tests/support/npy.js'));
async function main() {
  const [model, runs, dimsArg, threads] = [process.argv[2], parseInt(process.argv[3] || '20'), process.argv[4], parseInt(process.argv[5] || '1')];
  const prefix = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ortprof')), 'p');
  const s = await ort.InferenceSession.create(model, {executionMode: 'sequential', intraOpNumThreads: threads, interOpNumThreads: 1,
                                                      graphOptimizationLevel: 'all', enableProfiling: true, profileFilePrefix: prefix});
  const feeds = {[s.inputNames[0]]: inputOf(ort, dimsArg)};
  for (let i = 0; i < 3; i++) await s.run(feeds);
  for (let i = 0; i < runs; i++) await s.run(feeds);
  s.endProfiling();
  const dir = path.dirname(prefix);
  const file = path.join(dir, fs.readdirSync(dir)[0]);
  const events = JSON.parse(fs.readFileSync(file));
  const perRun = [];  // per model_run: {op: us}
  const nodeTimes = {};  // node: [us per run]
  let current = null;
  const runsUs = [];
  for (const e of events) {
    if (e.cat === 'Session' && e.name === 'model_run') { runsUs.push(e.dur); }
  }
  // Node events come in run order; a node's kernel_time belongs to the run whose window holds it.
  const windows = events.filter(e => e.cat === 'Session' && e.name === 'model_run').map(e => [e.ts, e.ts + e.dur]);
  for (const w of windows) perRun.push({});
  for (const e of events) {
    if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time')) continue;
    const i = windows.findIndex(w => e.ts >= w[0] && e.ts <= w[1]);
    if (i < 0) continue;
    const op = e.args.op_name;
    perRun[i][op] = (perRun[i][op] || 0) + e.dur;
    const node = e.name.slice(0, -'_kernel_time'.length);
    (nodeTimes[node] = nodeTimes[node] || []).push(e.dur);
  }
  const timed = perRun.slice(3);
  const ops = new Set(); timed.forEach(r => Object.keys(r).forEach(k => ops.add(k)));
  const med = a => { a = a.slice().sort((x, y) => x - y); return a[Math.floor(a.length / 2)]; };
  const out = {};
  for (const op of ops) out[op] = med(timed.map(r => r[op] || 0)) / 1000;
  const nodes = {};
  for (const [k, v] of Object.entries(nodeTimes)) nodes[k] = med(v) / 1000;
  console.log(JSON.stringify({model, threads, median_run_ms: med(runsUs.slice(3)) / 1000, ops: out, nodes}));
  fs.rmSync(dir, {recursive: true});
}
main();
