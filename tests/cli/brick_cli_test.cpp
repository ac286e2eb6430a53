// The brick command line on good and bad input: every mistake is a non-zero exit status (1 for
// errors from the library, CLI11's codes for flags it refuses, 2 for a failed assertion) and a line
// on stderr that says what was wrong, never a crash, and never a partial output file.
#include "cli/brick_cli.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "brick/core/cpu_features.hpp"

namespace brick::cli {
namespace {

namespace fs = std::filesystem;

TEST_F(BrickCli, RunGeneratesTextAndVerifiesEveryBrick) {
  const Outcome o = brick(fmt::format("run '{}' -n 6 --prompt 'the tea'", model().string()));
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(o.out.rfind("the tea", 0), 0u) << o.out;
  for (const char* part : {"load:", "prompt:", "decode:", "Brick profile", "slowest block",
                           "budgets at", "verify: 26 bricks", " 0 failed"}) {
    EXPECT_NE(o.out.find(part), std::string::npos) << part << "\n" << o.out;
  }
}

TEST_F(BrickCli, JsonHasExactlyTheDocumentedKeys) {
  const Outcome o = brick(fmt::format(
      "run '{}' -n 4 --prompt-tokens 1,300,301 --top-logits 3 --json", model().string()));
  ASSERT_EQ(o.status, 0) << o.err;
  const auto json = nlohmann::json::parse(o.out);
  std::vector<std::string> keys;
  for (const auto& [key, value] : json.items()) keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{"generated", "profile", "prompt", "repacked", "steps",
                                            "text", "timings", "verify"}));
  EXPECT_TRUE(json["repacked"].contains("matrices"));
  EXPECT_TRUE(json["repacked"].contains("bytes"));
  EXPECT_EQ(json["prompt"], nlohmann::json({1, 300, 301}));
  EXPECT_EQ(json["generated"].size(), 4u);
  ASSERT_EQ(json["steps"].size(), 4u);
  EXPECT_EQ(json["steps"][0]["top"].size(), 3u);
  EXPECT_EQ(json["steps"][0]["token"], json["generated"][0]);
  for (const char* key :
       {"load_ms", "prompt_ms", "prompt_tokens_per_s", "decode_ms", "decode_tokens_per_s"}) {
    EXPECT_TRUE(json["timings"].contains(key)) << key;
  }
  EXPECT_EQ(json["verify"]["failed"], 0);
}

TEST_F(BrickCli, ForcedTokensAreFedWhilePredictionsAreReported) {
  const Outcome o = brick(
      fmt::format("run '{}' -n 3 --prompt-tokens 1,300 --force-tokens 7,8,9 --top-logits 1 --json",
                  model().string()));
  ASSERT_EQ(o.status, 0) << o.err;
  const auto json = nlohmann::json::parse(o.out);
  EXPECT_EQ(json["generated"], nlohmann::json({7, 8, 9}));
}

TEST_F(BrickCli, ReportsAreOnePageFromTheRunOrFromItsProfile) {
  const fs::path page = path("run.html"), profile = path("report-profile.json"), again = path("again.html");
  const Outcome o = brick(fmt::format("run '{}' -n 2 --report '{}' --profile-json '{}'", model().string(),
                                      page.string(), profile.string()));
  ASSERT_EQ(o.status, 0) << o.err;
  std::ifstream in(profile);
  const auto json = nlohmann::json::parse(in);
  EXPECT_EQ(json["schema"], "brick.profile");
  EXPECT_FALSE(json["run"]["layers"].empty());
  EXPECT_FALSE(json["run"]["timeline"].empty());
  EXPECT_FALSE(json["run"]["verdicts"].empty());
  const Outcome r = brick(fmt::format("report '{}' -o '{}'", profile.string(), again.string()));
  ASSERT_EQ(r.status, 0) << r.err;
  std::ifstream a(page), b(again);
  const std::string from_run(std::istreambuf_iterator<char>(a), {}), from_file(std::istreambuf_iterator<char>(b), {});
  EXPECT_EQ(from_run, from_file);
  for (const char* chart : {"bricks", "layers", "roofline", "timeline"}) {
    EXPECT_NE(from_run.find(fmt::format("data-chart=\"{}\"", chart)), std::string::npos) << chart;
  }
  std::ofstream(path("not-a-profile.json")) << R"({"schema": "brick.graph"})";
  expect_error(fmt::format("report '{}' -o '{}'", path("not-a-profile.json").string(), again.string()), "schema");
  expect_error(fmt::format("report '{}' -o '{}'", profile.string(), path("no-such-folder/r.html").string()),
               "--output");
  expect_error(fmt::format("run '{}' --report '{}'", model().string(), path("no-such-folder/r.html").string()),
               "--report");
}

TEST_F(BrickCli, ExportsAreWrittenWhole) {
  const fs::path trace = path("trace.json"), profile = path("profile.json"),
                 prom = path("metrics.prom");
  const Outcome o =
      brick(fmt::format("run '{}' -n 3 --trace '{}' --profile-json '{}' --prometheus '{}'",
                        model().string(), trace.string(), profile.string(), prom.string()));
  ASSERT_EQ(o.status, 0) << o.err;
  std::ifstream in(trace);
  const auto parsed = nlohmann::json::parse(in, nullptr, false);
  EXPECT_FALSE(parsed.is_discarded());
  EXPECT_TRUE(parsed.contains("traceEvents"));
  EXPECT_GT(fs::file_size(profile), 0u);
  EXPECT_GT(fs::file_size(prom), 0u);
}

TEST_F(BrickCli, ModelTraceIsWrittenAndSummarised) {
  const fs::path trace = path("model-trace.jsonl");
  const Outcome o = brick(fmt::format("run '{}' -n 4 --trace-model '{}' --trace-level full --trace-quant-every 1",
                                      model().string(), trace.string()));
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("model trace: " + trace.string() + " (full level)"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("no anomaly"), std::string::npos) << o.out;
  std::ifstream in(trace);
  std::vector<std::string> types;
  for (std::string line; std::getline(in, line);) types.push_back(nlohmann::json::parse(line)["type"]);
  ASSERT_GE(types.size(), 3u);
  EXPECT_EQ(types.front(), "header");
  EXPECT_EQ(types.back(), "summary");
  for (const char* type :
       {"tensor", "activation", "attention", "logits", "layer_logits", "quant_error", "kv_cache"}) {
    EXPECT_NE(std::find(types.begin(), types.end(), type), types.end()) << type;
  }

  const Outcome summary = brick(fmt::format("trace-summary '{}' --rows 3", trace.string()));
  ASSERT_EQ(summary.status, 0) << summary.err;
  for (const char* part : {"trace: level full", "anomalies: none", "quantization error: 9 bricks measured",
                           "attention:", "logits: 4 steps"}) {
    EXPECT_NE(summary.out.find(part), std::string::npos) << part << "\n" << summary.out;
  }

  const Outcome json = brick(fmt::format("run '{}' -n 2 --json --trace-model '{}'", model().string(),
                                         path("light.jsonl").string()));
  ASSERT_EQ(json.status, 0) << json.err;
  const auto parsed = nlohmann::json::parse(json.out);
  EXPECT_EQ(parsed["model_trace"]["level"], "lightweight");
  EXPECT_GT(parsed["model_trace"]["records"], 0);
  EXPECT_TRUE(parsed["model_trace"]["first_anomaly"].is_null());

  std::ofstream(path("not-a-trace.jsonl")) << "{\"type\": \"summary\"}\n";
  expect_error("trace-summary '" + path("not-a-trace.jsonl").string() + "'", "not-a-trace.jsonl");
  expect_error("trace-summary '" + path("missing.jsonl").string() + "'", "missing.jsonl");
  expect_error("run '" + model().string() + "' --trace-model '" + trace.string() + "' --trace-level everything",
               "--trace-level");
  expect_error("run '" + model().string() + "' --trace-model '" + path("none/t.jsonl").string() + "'",
               "--trace-model");
}

TEST_F(BrickCli, BadInputIsAClearErrorAndLeavesNoFiles) {
  const std::string m = "'" + model().string() + "'";
  expect_error("run " + m + " --ctx 100000", "context");
  expect_error("run " + m + " --prompt ''", "prompt is empty");
  expect_error("run " + m + " --prompt-tokens 1,99999", "99999");
  expect_error("run " + m + " --prompt-tokens 1,x", "token ids");
  expect_error("run " + m + " -n 1000", "positions");
  expect_error("run " + m + " --temp nan", "--temp");
  expect_error("run " + m + " -n 0x10", "--n-predict");
  expect_error("run " + m + " --seed -1", "--seed");
  expect_error("run " + m + " --budget-gbps 1e306", "--budget-gbps");
  expect_error("run " + m + " --trace " + path("same.json").string() + " --profile-json " +
                   path("same.json").string(),
               "two exports");
  expect_error("run " + m + " --trace " + path("no-such-folder/t.json").string(), "--trace");
  EXPECT_FALSE(fs::exists(path("no-such-folder")));

  // A truncated model and a file that is not GGUF.
  {
    std::ifstream in(model(), std::ios::binary);
    std::string bytes(std::istreambuf_iterator<char>(in), {});
    std::ofstream(path("truncated.gguf"), std::ios::binary) << bytes.substr(0, bytes.size() / 2);
    std::ofstream(path("text.gguf")) << "not a model\n";
  }
  expect_error("run '" + path("truncated.gguf").string() + "'", "truncated.gguf");
  expect_error("run '" + path("text.gguf").string() + "'", "text.gguf");
  expect_error("info '" + path("text.gguf").string() + "'", "text.gguf");

  const Outcome threads = brick("run " + m + " -n 2 --threads 4096");
  EXPECT_EQ(threads.status, 0) << threads.err;
  EXPECT_NE(threads.err.find("4096 threads asked for"), std::string::npos) << threads.err;
  expect_error("run " + m + " --threads 100000", "--threads");
  // A leading zero is decimal, not octal.
  const Outcome decimal = brick("run " + m + " -n 010 --json");
  ASSERT_EQ(decimal.status, 0) << decimal.err;
  EXPECT_EQ(nlohmann::json::parse(decimal.out)["generated"].size(), 10u);

  expect_error("quantize " + m + " " + m + " q8_0", "both the input and the output");
  expect_error("quantize " + m + " '" + path("out.gguf").string() + "' q3_k", "unknown type");
  expect_error("gen-model '" + path("bad.gguf").string() + "' --preset tiny --heads 3", "heads");
  EXPECT_FALSE(fs::exists(path("out.gguf")));
  EXPECT_FALSE(fs::exists(path("bad.gguf")));
}

TEST_F(BrickCli, InfoPrintsTheArchitectureAndTensors) {
  const Outcome text = brick("info '" + model().string() + "'");
  ASSERT_EQ(text.status, 0) << text.err;
  for (const char* part : {"llama: 2 layers, embd 256", "tokenizer.ggml.tokens",
                           "blk.1.ffn_down.weight", "q6_K", "totals by type"}) {
    EXPECT_NE(text.out.find(part), std::string::npos) << part;
  }
  const Outcome json = brick("info '" + model().string() + "' --json");
  ASSERT_EQ(json.status, 0) << json.err;
  const auto parsed = nlohmann::json::parse(json.out);
  EXPECT_EQ(parsed["llama"]["layers"], 2);
  EXPECT_EQ(parsed["metadata"]["tokenizer.ggml.tokens"]["length"], 512);
  EXPECT_EQ(parsed["tensors"].size(), 21u);
  const Outcome cpu = brick("info");
  EXPECT_EQ(cpu.status, 0);
  EXPECT_NE(cpu.out.find("backends"), std::string::npos);
}

TEST_F(BrickCli, CpuFeaturesTurnedOffShowInInfoAndAnUnknownOneIsAnError) {
  setenv("BRICK_CPU_DISABLE", "avx", 1);
  const Outcome scalar = brick("info");
  setenv("BRICK_CPU_DISABLE", "avx2,neon", 1);
  const Outcome unknown = brick("info");
  unsetenv("BRICK_CPU_DISABLE");
  ASSERT_EQ(scalar.status, 0) << scalar.err;
  EXPECT_NE(scalar.out.find("selected   scalar"), std::string::npos) << scalar.out;
  EXPECT_EQ(scalar.out.find("features   sse4.2 avx "), std::string::npos) << scalar.out;
  if (detect_cpu_features().avx) {
    EXPECT_NE(scalar.out.find("detected "), std::string::npos) << scalar.out;
  }
  EXPECT_NE(unknown.status, 0);
  EXPECT_NE(unknown.err.find("BRICK_CPU_DISABLE: 'neon' is not a CPU feature"), std::string::npos) << unknown.err;
}

}  // namespace
}  // namespace brick::cli
