// Runs a GGUF file in real llama.cpp (node-llama-cpp's prebuilt binaries) and
// compares it with tapegpt: tokenization of a text, and the next-token
// log-probabilities over one window against tapegpt's logits.
//
//   node llama_check.mjs JOB.json   → one JSON object on stdout
// JOB.json: {"model": "m.gguf", "text": "...", "window": [ids, T + 1 of them],
//            "logits": "tapegpt logits, float32 [T, V]", "vocab": V, "threads": 2,
//            "package": ".node/node_modules/node-llama-cpp" (where setup.sh put it),
//            "kv": "f16" (llama.cpp's default KV cache) or "f32"}
// Output: {"ids": llama.cpp's tokens of text, "nll": [T] llama.cpp's
// -log p(window[t+1]), "ref_nll": [T] tapegpt's, "argmax": [T] llama.cpp's
// most likely next token, "ref_argmax": [T] tapegpt's, "beyond": the most
// probability llama.cpp gives at any position to ids >= V (an added
// end-of-text token), "eos": llama.cpp's end-of-text id}. The checks are the
// caller's (test_export.py); this script only measures.
import fs from "node:fs";
import path from "node:path";
import {pathToFileURL} from "node:url";

const job = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
// The package lives in the project's own folder, not on Node's search path.
const {getLlama, LlamaLogLevel} = await import(pathToFileURL(path.join(job.package, "dist", "index.js")).href);
const T = job.window.length - 1, V = job.vocab;

// tapegpt's side, in float64: log-softmax of its logits.
const raw = fs.readFileSync(job.logits);
const logits = new Float32Array(raw.buffer, raw.byteOffset, raw.byteLength / 4);
if (logits.length !== T * V) throw new Error(`logits hold ${logits.length} floats, expected ${T}·${V}`);
const refNll = [], refArgmax = [];
for (let t = 0; t < T; ++t) {
  const row = logits.subarray(t * V, (t + 1) * V);
  let max = -Infinity, arg = 0;
  for (let v = 0; v < V; ++v) if (row[v] > max) { max = row[v]; arg = v; }
  let sum = 0;
  for (let v = 0; v < V; ++v) sum += Math.exp(row[v] - max);
  refNll.push(-(row[job.window[t + 1]] - max - Math.log(sum)));
  refArgmax.push(arg);
}

// llama.cpp's side: the CPU build shipped in the package, never a source build.
const llama = await getLlama({gpu: false, build: "never", logLevel: LlamaLogLevel.error});
const model = await llama.loadModel({modelPath: job.model, gpuLayers: 0});
const ids = Array.from(model.tokenize(job.text, false));
// One slot more than the window: a sequence that fills its context is
// shifted (its first tokens dropped) before the last token is evaluated,
// which changed only the last prediction when tried. The KV cache is
// float16 unless job.kv is "f32": the default measures what users run, f32
// the export alone.
const kv = job.kv === "f32" ? "F32" : "F16";
const context = await model.createContext({
  contextSize: T + 1, batchSize: T, threads: job.threads ?? 2, flashAttention: false,
  experimentalKvCacheKeyType: kv, experimentalKvCacheValueType: kv});
const sequence = context.getSequence();
// Greedy sampling (the default) leaves the logits untouched, so each
// position's probabilities are softmax(llama.cpp's logits), sorted.
const input = job.window.slice(0, T).map(t => [t, {generateNext: {probabilities: true}}]);
const out = await sequence.controlledEvaluate(input);
const nll = [], argmax = [];
let beyond = 0;  // the most probability any position gives tokens past tapegpt's V rows
for (let t = 0; t < T; ++t) {
  const probs = out[t].next.probabilities;
  nll.push(-Math.log(probs.get(job.window[t + 1]) ?? 0));
  argmax.push(probs.keys().next().value);
  let p = 0;
  for (const [token, q] of probs) if (token >= V) p += q;
  beyond = Math.max(beyond, p);
}
const eos = model.tokens.eos;
await context.dispose();
await model.dispose();
process.stdout.write(JSON.stringify({ids, nll, ref_nll: refNll, argmax, ref_argmax: refArgmax,
                                     eos, beyond}) + "\n");
