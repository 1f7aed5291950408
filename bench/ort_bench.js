// ONNX Runtime's single- and two-thread sequential latency, for the side-by-side
// figure in docs/performance.md. Install once, outside the source tree:
//   mkdir -p build/ort && cd build/ort && ONNXRUNTIME_NODE_INSTALL=skip npm install onnxruntime-node
// then: NODE_PATH=build/ort/node_modules node bench/ort_bench.js MODEL.onnx RUNS 1,3,224,224 [THREADS,...]
// (bench/ort_compare.sh runs one thread count per process: one session each).
const ort = require('onnxruntime-node');
async function main() {
  const [model, runs] = [process.argv[2], parseInt(process.argv[3] || '20')];
  const counts = (process.argv[5] || '1,2').split(',').map(Number);
  for (const threads of counts) {
    const s = await ort.InferenceSession.create(model, {executionMode: 'sequential', intraOpNumThreads: threads, interOpNumThreads: 1, graphOptimizationLevel: 'all'});
    const name = s.inputNames[0];
    const dims = process.argv[4].split(',').map(Number);
    const data = Float32Array.from({length: dims.reduce((a, b) => a * b)}, () => Math.random());
    const feeds = {[name]: new ort.Tensor('float32', data, dims)};
    for (let i = 0; i < 3; i++) await s.run(feeds);
    const t = [];
    for (let i = 0; i < runs; i++) { const a = process.hrtime.bigint(); await s.run(feeds); t.push(Number(process.hrtime.bigint() - a) / 1e6); }
    t.sort((a, b) => a - b);
    console.log(JSON.stringify({model, threads, median_ms: t[Math.floor(t.length / 2)]}));
  }
}
main();
