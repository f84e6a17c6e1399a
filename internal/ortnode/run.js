// Runs an ONNX graph exported by `flycl export` in ONNX Runtime for Node.js
// (the npm package onnxruntime-node) and writes its outputs.
//
//   node run.js JOB.json
//
// JOB.json: {"model": "m.onnx", "input": "features", "file": "x.f32",
//            "shape": [n, d], "out": "DIR", "repeat": 0}
// The input file holds the n×... float32 values, little-endian, row-major.
// Every output is written to DIR/<name>.bin (float32 or int64, as the
// graph gives it), and a line of JSON on stdout lists the outputs' types
// and shapes. With "repeat": R > 0 the batch is also run R more times and
// the line reports the seconds per run (after one warm-up run).
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

async function main() {
  const job = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  const session = await ort.InferenceSession.create(job.model);
  const buf = fs.readFileSync(job.file);
  const x = new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4);
  const feeds = { [job.input]: new ort.Tensor('float32', x, job.shape) };
  const res = await session.run(feeds);
  const report = { inputs: session.inputNames, outputs: {} };
  for (const name of session.outputNames) {
    const t = res[name];
    const d = t.data;
    fs.writeFileSync(path.join(job.out, name + '.bin'), Buffer.from(d.buffer, d.byteOffset, d.byteLength));
    report.outputs[name] = { type: t.type, dims: t.dims };
  }
  if (job.repeat > 0) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < job.repeat; i++) await session.run(feeds);
    report.seconds_per_run = Number(process.hrtime.bigint() - t0) / 1e9 / job.repeat;
  }
  console.log(JSON.stringify(report));
}

main().catch((e) => { console.error(e.message || e); process.exit(1); });
