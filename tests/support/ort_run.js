// Runs an ONNX model in ONNX Runtime (npm package onnxruntime-node) on one
// .npy input and writes its first output as raw little-endian float32;
// with --all, OUTPUT is a folder that gets every output as NAME.raw (raw
// little-endian data) and NAME.shape (the sizes, comma-separated).
// Usage: NODE_PATH=... node ort_run.js MODEL.onnx INPUT.npy OUTPUT.raw [--all]
// Exit code 3 when onnxruntime-node is not installed (the caller skips).
const fs = require('fs');
const {readNpy} = require('./npy.js');
let ort;
try {
  ort = require('onnxruntime-node');
} catch (e) {
  console.error('onnxruntime-node is not installed: ' + e.message);
  process.exit(3);
}

async function main() {
  const [model, input, output, all] = process.argv.slice(2);
  const session = await ort.InferenceSession.create(model, {intraOpNumThreads: 1, interOpNumThreads: 1});
  const result = await session.run({[session.inputNames[0]]: readNpy(ort, input)});
  if (all === '--all') {
    for (const name of session.outputNames) {
      const t = result[name];
      fs.writeFileSync(output + '/' + name + '.raw', Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength));
      fs.writeFileSync(output + '/' + name + '.shape', t.dims.join(','));
    }
    return;
  }
  const out = result[session.outputNames[0]];
  fs.writeFileSync(output, Buffer.from(out.data.buffer, out.data.byteOffset, out.data.byteLength));
}
main().catch(e => { console.error(e.message || String(e)); process.exit(1); });
