#pragma once
// Real llama.cpp (node-llama-cpp, installed by scripts/setup into .oracle/) driven through
// tests/e2e/llama_cpp_run.mjs: the same GGUF run there, for tests and benchmarks that compare
// Brick with llama.cpp step by step.
#include <cstddef>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace brick::test {

struct LlamaCppRequest {
  std::filesystem::path model;
  std::vector<int> prompt;
  std::size_t n = 0;  // tokens to generate greedily
  std::size_t threads = 1;
  std::size_t context = 512;
  std::size_t top = 8;     // top ids reported per step
  std::vector<int> force;  // teacher forcing
  std::string text;        // when not empty: llama.cpp's tokenization of it ("tokens")
};

struct LlamaCppStep {
  int token = 0;
  std::vector<std::pair<int, double>> top;  // (id, logit - top logit), most probable first
};

struct LlamaCppRun {
  std::vector<int> generated;
  std::vector<LlamaCppStep> steps;
  std::vector<int> tokens;        // of the request's text
  std::vector<std::string> perf;  // llama_perf_context_print lines
  double load_ms = 0, prompt_ms = 0, decode_ms = 0;
  nlohmann::json raw;
};

// Runs the request; throws std::runtime_error with node's stderr when node or the oracle is missing
// or llama.cpp fails (the message says to run ./scripts/setup).
LlamaCppRun run_llama_cpp(const LlamaCppRequest& request);

// llama.cpp's own prompt and decode speeds from its perf lines (tokens per second), or 0.
double llama_cpp_tokens_per_second(const LlamaCppRun& run,
                                   const std::string& which);  // "prompt eval" / "eval"

}  // namespace brick::test
