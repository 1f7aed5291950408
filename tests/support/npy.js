// NumPy .npy files (C order, little-endian) as onnxruntime-node tensors, for the scripts
// that run ONNX Runtime: tests/support/ort_run.js and bench/ort_*.js.
const fs = require('fs');

const types = {  // descr -> [ONNX Runtime's type, typed array]
  '<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array], '<i8': ['int64', BigInt64Array],
  '<i4': ['int32', Int32Array], '|u1': ['uint8', Uint8Array], '|i1': ['int8', Int8Array], '|b1': ['bool', Uint8Array]};

function readNpy(ort, path) {
  const b = fs.readFileSync(path);
  if (b.length < 10 || b.toString('latin1', 1, 6) !== 'NUMPY') throw new Error(path + ': not a .npy file');
  const major = b[6];
  const headerLen = major === 1 ? b.readUInt16LE(8) : b.readUInt32LE(8);
  const start = (major === 1 ? 10 : 12) + headerLen;
  const header = b.slice(major === 1 ? 10 : 12, start).toString('latin1');
  if (/'fortran_order': True/.test(header)) throw new Error(path + ': Fortran order is not supported');
  const descr = (header.match(/'descr': '([^']*)'/) || [])[1];
  if (!types[descr]) throw new Error(path + ": element type '" + descr + "' is not supported");
  const [type, Array] = types[descr];
  const shape = header.match(/'shape': \(([^)]*)\)/)[1].split(',').filter(s => s.trim()).map(Number);
  return new ort.Tensor(type, new Array(b.buffer.slice(b.byteOffset + start, b.byteOffset + b.length)), shape);
}

// A model's input for timing: a .npy file's data, or random floats of the sizes given ("1,3,224,224").
function inputOf(ort, text) {
  if (text.endsWith('.npy')) return readNpy(ort, text);
  const dims = text.split(',').map(Number);
  return new ort.Tensor('float32', Float32Array.from({length: dims.reduce((a, b) => a * b)}, () => Math.random()), dims);
}

module.exports = {readNpy, inputOf};
