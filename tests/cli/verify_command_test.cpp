// brick verify end to end on a two-layer model: the backends this machine has agree in tolerance
// mode, a fault injected into one kernel at one (layer, token) is named exactly and fails the run,
// and a checksum file saved by one run compares exactly with the next run of the same build. And
// brick run's --graph and --critical-path.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "brick/core/backend.hpp"
#include "cli/brick_cli.hpp"

namespace brick::cli {
namespace {

namespace fs = std::filesystem;

class VerifyCommand : public BrickCli {
 protected:
  void SetUp() override {
    if (!is_supported(Backend::Avx2)) GTEST_SKIP() << "this CPU runs only the Scalar backend: nothing to compare";
  }
  // `brick verify MODEL ARGS`.
  static Outcome verify(const std::string& args) { return brick(fmt::format("verify '{}' {}", model().string(), args)); }
  static void expect_verify_error(const std::string& args, const std::string& needle) {
    expect_error(fmt::format("verify '{}' {}", model().string(), args), needle);
  }
  static nlohmann::json json_of(const Outcome& o) {
    const auto json = nlohmann::json::parse(o.out, nullptr, false);
    EXPECT_FALSE(json.is_discarded()) << o.out;
    return json;
  }
};

TEST_F(VerifyCommand, TheBackendsAgreeInToleranceMode) {
  const Outcome o = verify("-n 4");
  ASSERT_EQ(o.status, 0) << o.out << o.err;
  EXPECT_NE(o.out.find("avx2 against scalar: no divergence in "), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("kernels compared (tolerance 0.02)"), std::string::npos) << o.out;
  if (is_supported(Backend::Avx512)) {
    EXPECT_NE(o.out.find("avx512 against scalar: no divergence"), std::string::npos) << o.out;
  }
}

TEST_F(VerifyCommand, AnInjectedFaultIsNamedExactlyAndFailsTheRun) {
  const Outcome o = verify("-n 4 --json --inject-fault blk.1.ffn_down,1,2,avx2");
  EXPECT_EQ(o.status, 2) << o.err;
  const auto json = json_of(o);
  EXPECT_EQ(json["diverged"], true);
  ASSERT_GE(json["comparisons"].size(), 1u);
  const auto& avx2 = json["comparisons"][0];
  EXPECT_EQ(avx2["candidate"], "avx2");
  EXPECT_EQ(avx2["reference"], "scalar");
  EXPECT_EQ(avx2["report"]["first"]["key"],
            nlohmann::json({{"kernel", "blk.1.ffn_down"}, {"layer", 1}, {"token", 2}, {"call", 0}}));
  for (std::size_t i = 1; i < json["comparisons"].size(); ++i) {
    EXPECT_EQ(json["comparisons"][i]["report"]["diverged"], false);  // the fault is avx2's only
  }

  const Outcome text = verify("-n 4 --inject-fault blk.0.qkv,0,1,avx2");
  EXPECT_EQ(text.status, 2);
  EXPECT_NE(text.out.find("avx2 against scalar: first divergence (tolerance 0.02): blk.0.qkv (layer 0, token 1)"),
            std::string::npos)
      << text.out;
}

TEST_F(VerifyCommand, ASavedRunComparesExactlyWithTheNextRun) {
  const fs::path saved = path("checksums.json");
  const Outcome first = verify(fmt::format("-n 3 --save-checksums '{}'", saved.string()));
  ASSERT_EQ(first.status, 0) << first.err;
  std::ifstream in(saved);
  const auto file = nlohmann::json::parse(in);
  EXPECT_EQ(file["format"], "brick.checksums");
  EXPECT_EQ(file["runs"][0]["name"], "scalar");
  EXPECT_EQ(file["tokens"].size(), 3u);

  const Outcome again = verify(fmt::format("--mode exact --against '{}'", saved.string()));
  ASSERT_EQ(again.status, 0) << again.out << again.err;
  EXPECT_NE(again.out.find("scalar against scalar of"), std::string::npos) << again.out;
  EXPECT_NE(again.out.find("avx2 against avx2 of"), std::string::npos) << again.out;
  EXPECT_NE(again.out.find("no divergence in"), std::string::npos) << again.out;
  EXPECT_EQ(again.out.find("first divergence"), std::string::npos) << again.out;

  // Against the saved run, a fault in the Scalar backend itself is found in exact mode, exactly:
  // here in the LM head (layer 2 of this model) at the first generated token's position.
  const std::size_t position = file["prompt"].size();
  const Outcome faulty = verify(fmt::format("--json --mode exact --against '{}' --inject-fault output,2,{},scalar",
                                            saved.string(), position));
  EXPECT_EQ(faulty.status, 2) << faulty.err;
  const auto json = json_of(faulty);
  EXPECT_EQ(json["comparisons"][0]["candidate"], "scalar");
  EXPECT_EQ(json["comparisons"][0]["report"]["first"]["key"],
            nlohmann::json({{"kernel", "output"}, {"layer", 2}, {"token", position}, {"call", 0}}));
}

TEST_F(VerifyCommand, BadInputFailsBeforeAnythingRuns) {
  std::ofstream(path("broken.json")) << R"({"format": "brick.checksums", "version": 1)";
  expect_verify_error(fmt::format("--against '{}'", path("broken.json").string()), "broken.json");
  std::ofstream(path("other.json")) << R"({"format": "brick.checksums", "version": 1, "model": "another",
    "prompt": [1], "tokens": [2], "runs": [{"name": "scalar", "limit": 1, "dropped": 0, "entries": []}]})";
  expect_verify_error(fmt::format("--against '{}'", path("other.json").string()), "another");
  expect_verify_error(fmt::format("--save-checksums '{}'", path("missing/c.json").string()), "--save-checksums");
  expect_verify_error("--inject-fault blk.1,x,2", "layer");
  expect_verify_error("--inject-fault blk.1,1,2,gpu", "gpu");
  expect_verify_error("--mode bits", "--mode");
  expect_verify_error("--tolerance -1", "--tolerance");
  expect_verify_error("-n 0", "--n-predict");
  EXPECT_FALSE(fs::exists(path("missing")));
}

TEST_F(BrickCli, RunWritesTheGraphAndPrintsTheCriticalPath) {
  const fs::path json = path("graph.json"), dot = path("graph.dot");
  const Outcome o = brick(fmt::format("run '{}' -n 2 --graph '{}' --critical-path", model().string(), json.string()));
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("critical path: "), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("roofline against "), std::string::npos) << o.out;
  std::ifstream in(json);
  const auto graph = nlohmann::json::parse(in);
  EXPECT_EQ(graph["format"], "brick.graph");
  EXPECT_GT(graph["nodes"].size(), 50u);
  EXPECT_TRUE(fs::exists(path("brick/peaks.json")));  // measured once, in the cache folder

  const Outcome d = brick(fmt::format("run '{}' -n 1 --json --graph '{}'", model().string(), dot.string()));
  ASSERT_EQ(d.status, 0) << d.err;
  EXPECT_FALSE(nlohmann::json::parse(d.out, nullptr, false).is_discarded());  // stdout stays JSON
  std::ifstream dot_in(dot);
  std::string first_line;
  std::getline(dot_in, first_line);
  EXPECT_EQ(first_line, "digraph execution {");

  expect_error(fmt::format("run '{}' --graph '{}'", model().string(), path("graph.txt").string()), ".dot");
  expect_error(fmt::format("run '{}' --graph '{}'", model().string(), path("none/g.json").string()), "--graph");
  expect_error(fmt::format("run '{}' --graph '{}' --trace '{}'", model().string(), json.string(), json.string()),
               "two exports");
}

}  // namespace
}  // namespace brick::cli
