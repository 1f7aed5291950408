// One ONNX Runtime configuration serving timed runs in turns, with the protocol of
// `ramiel time-worker` (core/pipeline/isolated_timing.h), so that bench/turns.py can
// alternate it with Ramiel's configurations, each in a process of its own: "ready" once
// the session is made; "warm K": K untimed runs, answered "warm"; "run K": untimed runs
// for 0.1 s (at least one; the turn's start, as Ramiel's workers do), then K timed ones,
// answered "times t1 ... tK" in seconds; "quit" or the end of its input ends it.
// Sequential execution, all graph optimizations, one session; the first input random
// floats of the sizes given, or the data of a .npy file (a detector's image).
// Usage: NODE_PATH=build/ort/node_modules node bench/ort_worker.js MODEL.onnx 1,3,224,224|INPUT.npy THREADS
const ort = require('onnxruntime-node');
const path = require('path');
const readline = require('readline');
const {inputOf} = require(path.join(__dirname, '../tests/support/npy.js'));

const seconds = (from) => Number(process.hrtime.bigint() - from) / 1e9;

async function main() {
  const [model, dimsText, threads] = process.argv.slice(2);
  const session = await ort.InferenceSession.create(model, {
    executionMode: 'sequential', intraOpNumThreads: Number(threads), interOpNumThreads: 1,
    graphOptimizationLevel: 'all', logSeverityLevel: 3});  // errors only: no warning per run on the table
  const feeds = {[session.inputNames[0]]: inputOf(ort, dimsText)};
  console.log('ready');
  for await (const line of readline.createInterface({input: process.stdin})) {
    const [command, count] = line.split(' ');
    const k = Math.max(1, Number(count) || 1);
    if (command === 'warm') {
      for (let i = 0; i < k; i++) await session.run(feeds);
      console.log('warm');
    } else if (command === 'run') {
      const start = process.hrtime.bigint();
      do await session.run(feeds); while (seconds(start) < 0.1);
      const times = [];
      for (let i = 0; i < k; i++) {
        const t = process.hrtime.bigint();
        await session.run(feeds);
        times.push(seconds(t));
      }
      console.log('times ' + times.join(' '));
    } else {
      break;
    }
  }
  process.exit(0);
}

main().catch((e) => { console.error(`ort_worker: ${process.argv[2]}: ${e.message}`); process.exit(1); });
