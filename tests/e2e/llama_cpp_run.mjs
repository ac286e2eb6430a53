// Runs a GGUF model in real llama.cpp (node-llama-cpp, installed by scripts/setup into .oracle/) and
// prints one JSON object, so tests and benchmarks can compare Brick with llama.cpp step by step.
//
//   node llama_cpp_run.mjs '{"model": "m.gguf", "prompt": [1, 15, 27], "n": 32, "threads": 1,
//                            "context": 512, "top": 8, "force": [ ... ], "text": "..." }'
//   node llama_cpp_run.mjs @request.json      (the same object, read from a file)
//   node llama_cpp_run.mjs '{"baseline": true}'   (node and llama.cpp's libraries loaded, no model)
//
// The prompt is evaluated in one batch; then n tokens are generated greedily, one per evaluation.
// With "force", the i-th forced id is fed instead of the i-th prediction (teacher forcing), while
// "steps" still reports what the model predicted. Each step's "top" holds the `top` most probable
// ids with logits relative to the top one (log(p_i / p_top) = logit_i - logit_top: llama.cpp
// reports a softmax of the raw logits). "perf" holds llama.cpp's own llama_perf_context_print
// lines. With "text", "tokens" holds llama.cpp's tokenization of it (special tokens not parsed, no
// BOS added). With "baseline", the script stops once node-llama-cpp and llama.cpp's libraries are
// loaded: the process's peak memory is then what node itself takes, for benchmarks that measure
// llama.cpp's. Flash attention is off and the CPU is used alone: the numerics then follow
// ../../../shared/llama-cpp-e2e.md.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const oracle = process.env.BRICK_LLAMA_CPP_DIR ?? path.join(here, "..", "..", ".oracle", "node_modules", "node-llama-cpp");
const { getLlama, LlamaLogLevel } = await import(pathToFileURL(path.join(oracle, "dist", "index.js")).href);

const request = process.argv[2] ?? "{}";
const args = JSON.parse(request.startsWith("@") ? fs.readFileSync(request.slice(1), "utf8") : request);
const { model, prompt, n = 0, threads = 1, context = 512, top = 8, force = null, text = null, baseline = false } = args;
if (baseline) {
  const llama = await getLlama({ gpu: false, build: "never", usePrebuiltBinaries: true, skipDownload: true });
  console.log(JSON.stringify({ baseline: true }));
  await llama.dispose();
  process.exit(0);
}
if (!model || !Array.isArray(prompt) || prompt.length === 0) {
  console.error("usage: node llama_cpp_run.mjs '{\"model\": PATH, \"prompt\": [ids...], \"n\": N}'");
  process.exit(2);
}

const perf = [];
const llama = await getLlama({
  gpu: false, build: "never", usePrebuiltBinaries: true, skipDownload: true, maxThreads: 0,
  logLevel: LlamaLogLevel.info,
  logger: (level, message) => {
    if (message.includes("llama_perf_context_print")) perf.push(message.trim());
    else if (level === "error" || level === "fatal") console.error(message.trim());
  },
});
const loadStart = performance.now();
const llm = await llama.loadModel({ modelPath: model, gpuLayers: 0 });
const ctx = await llm.createContext({
  contextSize: context, batchSize: Math.max(prompt.length, 1), threads, flashAttention: false,
  sequences: 1, performanceTracking: true,
});
const loadMs = performance.now() - loadStart;
const seq = ctx.getSequence();
const tokens = text === null ? null : [...llm.tokenize(text, false)];

function step(result) {
  const probabilities = [...result.next.probabilities.entries()].slice(0, top);
  const pTop = probabilities[0][1];
  return {
    token: result.next.token,
    top: probabilities.map(([id, p]) => ({ id, logit: Math.log(p / pTop) })),
  };
}

const steps = [];
const generated = [];
const next = { generateNext: { token: true, probabilities: true } };
const promptStart = performance.now();
let results = await seq.controlledEvaluate([...prompt.slice(0, -1), [prompt[prompt.length - 1], next]]);
const promptMs = performance.now() - promptStart;
const decodeStart = performance.now();
for (let i = 0; i < n; ++i) {
  const current = step(results[results.length - 1]);
  steps.push(current);
  const fed = force && i < force.length ? force[i] : current.token;
  generated.push(fed);
  if (i + 1 === n) break;
  results = await seq.controlledEvaluate([[fed, next]]);
}
const decodeMs = performance.now() - decodeStart;
await ctx.printTimings();
console.log(JSON.stringify({
  prompt, generated, steps, perf, tokens,
  timings: { load_ms: loadMs, prompt_ms: promptMs, decode_ms: decodeMs },
}));
await ctx.dispose();
await llm.dispose();
await llama.dispose();
