#include "brick/graph/checksum_file.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "brick/core/error.hpp"
#include "brick/graph/divergence.hpp"

namespace brick::graph {
namespace {

namespace fs = std::filesystem;

ChecksumFile sample() {
  ChecksumFile file;
  file.model = "brick-synthetic-2x256-q6_k-s42";
  file.prompt = {1, 300, 301};
  file.tokens = {7, 8};
  for (const char* backend : {"scalar", "avx2"}) {
    ChecksumRun run{backend, ChecksumLog(1000)};
    const float inf = std::numeric_limits<float>::infinity();
    for (int position = 0; position < 3; ++position) {
      run.log.record("blk.0.qkv", 0, position, std::vector<float>{0.1f * position, -2.0f, 1e-30f});
      run.log.record("output", 2, position, std::vector<float>{inf, std::nanf(""), 3.0f});
    }
    run.log.record("blk.0.qkv", 0, 2, std::vector<float>{1.0f});  // call 1
    run.log.add_dropped(4);
    file.runs.push_back(std::move(run));
  }
  return file;
}

class ChecksumFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ = fs::temp_directory_path() / fmt::format("brick-checksums-{}-{}", getpid(),
                                                      ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(folder_);
  }
  void TearDown() override { fs::remove_all(folder_); }
  fs::path path(const std::string& name) const { return folder_ / name; }
  void write(const fs::path& p, const std::string& text) const { std::ofstream(p) << text; }

  fs::path folder_;
};

TEST_F(ChecksumFileTest, SavedAndLoadedItIsTheSameInExactMode) {
  const ChecksumFile original = sample();
  save_checksums(path("run.json"), original);
  const ChecksumFile loaded = load_checksums(path("run.json"));
  EXPECT_EQ(loaded.model, original.model);
  EXPECT_EQ(loaded.prompt, original.prompt);
  EXPECT_EQ(loaded.tokens, original.tokens);
  ASSERT_EQ(loaded.runs.size(), 2u);
  for (std::size_t r = 0; r < loaded.runs.size(); ++r) {
    const ChecksumLog& a = original.runs[r].log;
    const ChecksumLog& b = loaded.runs[r].log;
    EXPECT_EQ(loaded.runs[r].name, original.runs[r].name);
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].checksum(), b[i].checksum()) << i;
    EXPECT_EQ(b.dropped(), 4u);
    EXPECT_EQ(b.limit(), 1000u);
    EXPECT_FALSE(find_divergence(a, b, CompareMode::Exact).diverged());
  }
  EXPECT_NE(loaded.find("avx2"), nullptr);
  EXPECT_EQ(loaded.find("avx512"), nullptr);
}

TEST_F(ChecksumFileTest, AMissingOrUnreadableFileIsAnIoError) {
  EXPECT_THROW(load_checksums(path("absent.json")), IoError);
  EXPECT_THROW(load_checksums(folder_), IoError);
  EXPECT_THROW(save_checksums(path("no/such/folder/run.json"), sample()), IoError);
}

// Every way a file can be wrong is a FormatError that names where, never a crash.
TEST_F(ChecksumFileTest, EveryMalformedFieldIsAFormatError) {
  const nlohmann::json good = nlohmann::json::parse(to_json(sample()));
  const auto changed = [&](auto edit) {
    nlohmann::json copy = good;
    edit(copy);
    return copy.dump();
  };
  const auto entry = [](nlohmann::json& j) -> nlohmann::json& { return j["runs"][0]["entries"][0]; };
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "not a JSON document"},
      {"{\"format\": ", "not a JSON document"},
      {"[]", "expected a JSON object"},
      {changed([](nlohmann::json& j) { j["format"] = "brick.profile"; }), "format"},
      {changed([](nlohmann::json& j) { j["version"] = 2; }), "version"},
      {changed([](nlohmann::json& j) { j.erase("model"); }), "'model' is missing"},
      {changed([](nlohmann::json& j) { j["prompt"] = {1, -5}; }), "prompt"},
      {changed([](nlohmann::json& j) { j["tokens"] = "7,8"; }), "tokens"},
      {changed([](nlohmann::json& j) { j["runs"] = nlohmann::json::object(); }), "runs"},
      {changed([](nlohmann::json& j) { j["runs"][1]["name"] = "scalar"; }), "a second run named 'scalar'"},
      {changed([](nlohmann::json& j) { j["runs"][0]["name"] = ""; }), "name"},
      {changed([](nlohmann::json& j) { j["runs"][0]["limit"] = 2; }), "limit"},
      {changed([](nlohmann::json& j) { j["runs"][0]["dropped"] = -1; }), "dropped"},
      {changed([&](nlohmann::json& j) { entry(j)["hash"] = "0x123"; }), "entries[0].hash"},
      {changed([&](nlohmann::json& j) { entry(j)["hash"] = "0xzzzzzzzzzzzzzzzz"; }), "hash"},
      {changed([&](nlohmann::json& j) { entry(j)["hash"] = 12345; }), "hash"},
      {changed([&](nlohmann::json& j) { entry(j)["kernel"] = ""; }), "kernel name"},
      {changed([&](nlohmann::json& j) { entry(j)["layer"] = -2; }), "layer"},
      {changed([&](nlohmann::json& j) { entry(j)["layer"] = 1e20; }), "layer"},
      {changed([&](nlohmann::json& j) { entry(j)["token"] = "3"; }), "token"},
      {changed([&](nlohmann::json& j) { entry(j)["call"] = 1; }), "call index"},
      {changed([&](nlohmann::json& j) { entry(j)["summary"]["count"] = 1.5; }), "count"},
      {changed([&](nlohmann::json& j) { entry(j)["summary"]["nan"] = 99; }), "NaN and Inf"},
      {changed([&](nlohmann::json& j) { entry(j)["summary"]["min"] = 50.0; }), "minimum above the maximum"},
      {changed([&](nlohmann::json& j) { entry(j)["summary"]["sum_squares"] = -1.0; }), "sum of squares"},
      {changed([&](nlohmann::json& j) { entry(j)["summary"].erase("max"); }), "'max' is missing"},
      {changed([&](nlohmann::json& j) { entry(j)["summary"] = 3; }), "summary"},
      {changed([&](nlohmann::json& j) { j["runs"][0]["entries"][1] = entry(j); }), "call index"},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto& [text, needle] = cases[i];
    const fs::path p = path(fmt::format("bad{}.json", i));
    write(p, text);
    try {
      load_checksums(p);
      ADD_FAILURE() << "case " << i << " loaded: " << needle;
    } catch (const FormatError& error) {
      EXPECT_NE(std::string(error.what()).find(needle), std::string::npos) << "case " << i << ": " << error.what();
      EXPECT_NE(std::string(error.what()).find(p.string()), std::string::npos) << error.what();
    }
  }
}

TEST_F(ChecksumFileTest, TruncatedFilesAreFormatErrors) {
  const std::string text = to_json(sample());
  for (std::size_t length = 0; length < text.size(); length += 97) {
    EXPECT_THROW(checksum_file_from_json(text.substr(0, length)), FormatError) << length;
  }
}

}  // namespace
}  // namespace brick::graph
