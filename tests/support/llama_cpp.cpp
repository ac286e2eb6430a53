#include "support/llama_cpp.hpp"

#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string_view>

namespace brick::test {
namespace {

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

LlamaCppRun run_llama_cpp(const LlamaCppRequest& r) {
  const std::filesystem::path script =
      std::filesystem::path(BRICK_SOURCE_DIR) / "tests" / "e2e" / "llama_cpp_run.mjs";
  const std::string stem = "brick-llama-cpp-" + std::to_string(getpid()) + "-" +
                           std::to_string(reinterpret_cast<std::uintptr_t>(&r));
  const std::filesystem::path request = std::filesystem::temp_directory_path() / (stem + ".json");
  const std::filesystem::path errors = std::filesystem::temp_directory_path() / (stem + ".err");
  nlohmann::json body = {{"model", r.model.string()}, {"prompt", r.prompt},   {"n", r.n},
                         {"threads", r.threads},      {"context", r.context}, {"top", r.top}};
  if (!r.force.empty()) body["force"] = r.force;
  if (!r.text.empty()) body["text"] = r.text;
  std::ofstream(request) << body.dump();
  const std::string command =
      "timeout --kill-after=10 600 node '" + script.string() + "' '@" + request.string() + "' 2>'" + errors.string() + "'";
  std::string out;
  if (FILE* pipe = popen(command.c_str(), "r")) {
    std::array<char, 65536> buffer{};
    std::size_t n = 0;
    while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
      out.append(buffer.data(), n);
    const int status = pclose(pipe);
    const std::string stderr_text = slurp(errors);
    std::filesystem::remove(request);
    std::filesystem::remove(errors);
    if (status != 0) {
      throw std::runtime_error(
          "llama.cpp (node " + script.string() + ") failed with status " + std::to_string(status) +
          "; run ./scripts/setup to install the oracle. stderr:\n" + stderr_text);
    }
  } else {
    throw std::runtime_error("cannot start node; run ./scripts/setup");
  }
  // The JSON object is the last line; node-llama-cpp may print other lines before it.
  const std::size_t start = out.rfind("\n{");
  LlamaCppRun run;
  run.raw = nlohmann::json::parse(start == std::string::npos ? out : out.substr(start + 1));
  run.generated = run.raw.at("generated").get<std::vector<int>>();
  for (const auto& step : run.raw.at("steps")) {
    LlamaCppStep s;
    s.token = step.at("token").get<int>();
    for (const auto& t : step.at("top"))
      s.top.emplace_back(t.at("id").get<int>(), t.at("logit").get<double>());
    run.steps.push_back(std::move(s));
  }
  if (run.raw.contains("tokens") && !run.raw["tokens"].is_null())
    run.tokens = run.raw["tokens"].get<std::vector<int>>();
  run.perf = run.raw.at("perf").get<std::vector<std::string>>();
  const auto& timings = run.raw.at("timings");
  run.load_ms = timings.at("load_ms").get<double>();
  run.prompt_ms = timings.at("prompt_ms").get<double>();
  run.decode_ms = timings.at("decode_ms").get<double>();
  return run;
}

double llama_cpp_tokens_per_second(const LlamaCppRun& run, const std::string& which) {
  // "llama_perf_context_print: prompt eval time = 12.34 ms / 5 tokens ( 2.47 ms per token, 405.19 tokens per second)"
  for (const std::string& text : run.perf) {
    const std::size_t colon = text.find(':');
    std::string_view body(text);
    body.remove_prefix(colon == std::string::npos ? 0 : colon + 1);
    while (!body.empty() && body.front() == ' ') body.remove_prefix(1);
    if (!body.starts_with(which + " time =")) continue;
    const std::size_t comma = body.rfind(',');
    const std::size_t unit = body.rfind(" tokens per second");
    if (comma == std::string_view::npos || unit == std::string_view::npos || unit < comma) continue;
    return std::stod(std::string(body.substr(comma + 1, unit - comma - 1)));
  }
  return 0.0;
}

}  // namespace brick::test
