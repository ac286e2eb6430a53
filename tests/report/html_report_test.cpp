#include "brick/report/html_report.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <unistd.h>

#include "brick/core/error.hpp"
#include "brick/graph/graph_export.hpp"
#include "report/report_sample.hpp"

namespace brick::report {
namespace {

using nlohmann::json;

struct ShownNumber {
  double value = 0.0;  // data-value: unrounded
  std::string text;    // what the page shows
};

// Every number the page shows, by its data-key: each `data-key="K" data-value="V">TEXT<`. Read by
// hand: GCC 12 warns inside <regex> under ASan, and the build treats warnings as errors.
std::map<std::string, ShownNumber> numbers_in(const std::string& html) {
  std::map<std::string, ShownNumber> numbers;
  const std::string key_start = "data-key=\"", value_start = "\" data-value=\"", text_start = "\">";
  for (std::size_t at = html.find(key_start); at != std::string::npos; at = html.find(key_start, at + 1)) {
    const std::size_t key = at + key_start.size();
    const std::size_t key_end = html.find('"', key);
    if (key_end == std::string::npos || key_end == key || html.compare(key_end, value_start.size(), value_start) != 0) continue;
    const std::size_t value = key_end + value_start.size();
    const std::size_t value_end = html.find('"', value);
    if (value_end == std::string::npos || value_end == value || html.compare(value_end, text_start.size(), text_start) != 0) continue;
    const std::size_t text = value_end + text_start.size();
    const std::size_t text_end = html.find('<', text);
    if (text_end == std::string::npos) continue;
    const std::string name = html.substr(key, key_end - key);
    EXPECT_TRUE(numbers
                    .emplace(name, ShownNumber{std::stod(html.substr(value, value_end - value)),
                                               html.substr(text, text_end - text)})
                    .second)
        << name;
  }
  return numbers;
}

// The shown text is the value rounded to the decimals it shows.
void expect_rounded(const std::string& key, const ShownNumber& n) {
  const std::size_t point = n.text.find('.');
  const int places = point == std::string::npos ? 0 : static_cast<int>(n.text.size() - point - 1);
  EXPECT_LE(std::fabs(std::stod(n.text) - n.value), 0.5 * std::pow(10.0, -places) * (1 + 1e-9)) << key << ": " << n.text;
}

class HtmlReport : public ::testing::Test {
 protected:
  void SetUp() override {
    profile_ = json::parse(sample_profile_json());
    html_ = to_html(parse_report_input(profile_.dump()));
    numbers_ = numbers_in(html_);
  }
  double at(const std::string& key) {
    const auto it = numbers_.find(key);
    if (it == numbers_.end()) {
      ADD_FAILURE() << "the page shows no " << key;
      return std::numeric_limits<double>::quiet_NaN();
    }
    expect_rounded(key, it->second);
    return it->second.value;
  }

  json profile_;
  std::string html_;
  std::map<std::string, ShownNumber> numbers_;
};

TEST_F(HtmlReport, NumbersInThePageAreTheProfilesNumbers) {
  ASSERT_GT(numbers_.size(), 40u);
  for (const auto& [key, n] : numbers_) expect_rounded(key, n);
  EXPECT_EQ(at("total_ms"), profile_["total_ns"].get<double>() / 1e6);
  EXPECT_EQ(at("total_tokens"), profile_["total_tokens"].get<double>());
  const json& bricks = profile_["bricks"];
  ASSERT_EQ(bricks.size(), 4u);
  for (std::size_t i = 0; i < bricks.size(); ++i) {
    const json& b = bricks[i];
    const std::string chart = "bricks." + std::to_string(i) + ".";
    const std::string table = "table." + std::to_string(i) + ".";
    const std::string roof = "roofline." + std::to_string(i) + ".";
    EXPECT_EQ(at(chart + "total_ms"), b["total_ns"].get<double>() / 1e6) << b["name"];
    EXPECT_EQ(at(chart + "share_percent"), 100.0 * b["share"].get<double>());
    EXPECT_EQ(at(table + "total_ms"), b["total_ns"].get<double>() / 1e6);
    EXPECT_EQ(at(table + "count"), b["count"].get<double>());
    EXPECT_EQ(at(table + "us_per_token"), b["us_per_token"].get<double>());
    EXPECT_EQ(at(table + "tokens_per_second"), b["tokens_per_second"].get<double>());
    EXPECT_EQ(at(table + "gb_per_second"), b["gb_per_second"].get<double>());
    EXPECT_EQ(at(table + "gflop_per_second"), b["gflop_per_second"].get<double>());
    EXPECT_EQ(at(roof + "gb_per_second"), b["gb_per_second"].get<double>());
    EXPECT_EQ(at(roof + "intensity"), b["flops"].get<double>() / b["bytes"].get<double>());
    if (b["budget"].is_null()) {
      EXPECT_FALSE(numbers_.contains(chart + "utilisation_percent")) << b["name"];
    } else {
      EXPECT_EQ(at(chart + "utilisation_percent"), 100.0 * b["budget"]["utilisation"].get<double>());
      EXPECT_EQ(at(table + "budget_us_per_token"), b["budget"]["us_per_token"].get<double>());
    }
  }
  const json& run = profile_["run"];
  EXPECT_EQ(at("peak_gflops"), run["peaks"]["gflops_per_second"].get<double>());
  EXPECT_EQ(at("roof_gbps"), run["peaks"]["gb_per_second"].get<double>());
  for (std::size_t i = 0; i < run["layers"].size(); ++i) {
    const json& layer = run["layers"][i];
    const std::string key = "layers." + std::to_string(i) + ".";
    EXPECT_EQ(at(key + "ms"), layer["ns"].get<double>() / 1e6);
    EXPECT_EQ(at(key + "tokens_per_second"), run["tokens"].get<double>() * 1e9 / layer["ns"].get<double>());
  }
  EXPECT_EQ(at("timeline_tokens"), 1.0);
  EXPECT_EQ(at("timeline_us"), 7.0);  // the second pass: 1000 to 8000 ns
  EXPECT_EQ(at("verdicts_failed"), 1.0);
}

TEST_F(HtmlReport, TheRooflineIsTheGraphRoomsRoofline) {
  const json& qkv = profile_["bricks"][0];
  ASSERT_EQ(qkv["name"], "QkvProjection");
  const graph::Roofline point = graph::roofline(qkv["flops"].get<double>(), qkv["bytes"].get<double>(),
                                                qkv["total_ns"].get<std::uint64_t>(), {400.0, 20.0});
  EXPECT_EQ(at("roofline.0.percent_of_roof"), 100.0 * point.fraction_of_roof);
  EXPECT_NE(html_.find("data-roof="), std::string::npos);
  EXPECT_NE(html_.find(R"(data-point="QkvProjection")"), std::string::npos);
}

TEST_F(HtmlReport, EveryStringIsEscaped) {
  EXPECT_EQ(html_.find("<script"), std::string::npos);
  EXPECT_EQ(html_.find("<model>"), std::string::npos);
  EXPECT_NE(html_.find("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;name&quot;"), std::string::npos);
  EXPECT_NE(html_.find("tiny &lt;model&gt; &amp; co"), std::string::npos);
}

TEST_F(HtmlReport, ThePageLoadsNothing) {
  EXPECT_NE(html_.find("Content-Security-Policy\" content=\"default-src 'none'"), std::string::npos);
  EXPECT_NE(html_.find("prefers-color-scheme: dark"), std::string::npos);
  for (const char* reference : {"src=", "href=", "url(", "@import", "http:", "https:", "<link", "<img"}) {
    EXPECT_EQ(html_.find(reference), std::string::npos) << reference;
  }
}

TEST(HtmlReportInput, TheRunsFactsReadBack) {
  const ReportInput input = parse_report_input(sample_profile_json());
  const RunFacts facts = sample_facts();
  EXPECT_EQ(input.run.title, facts.title);
  EXPECT_EQ(input.run.tokens, facts.tokens);
  ASSERT_EQ(input.run.layers.size(), facts.layers.size());
  EXPECT_EQ(input.run.layers[1].layer, "blk.0");
  EXPECT_EQ(input.run.layers[1].ns, 812345u);
  ASSERT_TRUE(input.run.peaks);
  EXPECT_EQ(input.run.peaks->gb_per_second, 20.0);
  ASSERT_EQ(input.run.timeline.size(), facts.timeline.size());
  EXPECT_EQ(input.run.timeline[4].thread, 1u);
  EXPECT_EQ(input.run.timeline[4].kind, graph::NodeKind::Kernel);
  ASSERT_EQ(input.run.verdicts.size(), 2u);
  EXPECT_FALSE(input.run.verdicts[1].passed);
  EXPECT_EQ(input.run.verdicts[1].detail, facts.verdicts[1].detail);
  ASSERT_EQ(input.bricks.size(), 4u);
  EXPECT_EQ(std::count_if(input.bricks.begin(), input.bricks.end(), [](const BrickTime& b) { return b.name == kHostileName; }), 1);
  ASSERT_TRUE(input.bricks[0].utilisation);
}

TEST(HtmlReportInput, TheTimelineIsTheLastPass) {
  std::uint64_t tokens = 0;
  const auto spans = last_pass_timeline(sample_graph(), tokens);
  ASSERT_EQ(spans.size(), 8u);
  EXPECT_EQ(spans.front().label, "layer 0");
  EXPECT_EQ(spans.front().start_ns, 0u);
  EXPECT_EQ(spans.back().label, "blk.1.ffn_down");
  EXPECT_EQ(spans.back().start_ns, 4100u);
  EXPECT_EQ(tokens, 1u);
  EXPECT_EQ(last_pass_timeline(sample_graph(), tokens, 3).size(), 3u);
  EXPECT_TRUE(last_pass_timeline(graph::ExecutionGraph(), tokens).empty());
}

TEST(HtmlReportInput, AProfileWithoutRunFactsStillMakesAPage) {
  BrickProfiler profiler;
  profiler.record(BrickId::RmsNorm, 1000, 1, 4096, 1024);
  const std::string html = to_html(parse_report_input(profiler.to_json()));
  EXPECT_NE(html.find("No per-layer times"), std::string::npos);
  EXPECT_NE(html.find("No machine peaks"), std::string::npos);
  EXPECT_NE(html.find("No timeline"), std::string::npos);
  EXPECT_NE(html.find("No verdicts"), std::string::npos);
  EXPECT_NE(html.find(R"(data-brick="RmsNorm")"), std::string::npos);
}

void expect_format_error(const std::string& text, const std::string& needle) {
  try {
    (void)parse_report_input(text, "p.json");
    ADD_FAILURE() << "no error for " << text.substr(0, 80);
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(HtmlReportInput, BadDocumentsAreFormatErrorsThatNameTheField) {
  expect_format_error("{not json", "p.json: not a JSON document");
  expect_format_error("[]", "expected a JSON object");
  expect_format_error(R"({"schema": "brick.graph", "version": 1})", "p.json.schema: expected \"brick.profile\"");
  expect_format_error(R"({"schema": "brick.profile", "version": 2})", "p.json.version: expected 1");
  json profile = json::parse(sample_profile_json());
  const auto broken = [&](const std::function<void(json&)>& change) {
    json copy = profile;
    change(copy);
    return copy.dump();
  };
  expect_format_error(broken([](json& j) { j.erase("total_ns"); }), "the field 'total_ns' is missing");
  expect_format_error(broken([](json& j) { j["bricks"][1]["count"] = -3; }), "p.json.bricks[1].count");
  expect_format_error(broken([](json& j) { j["bricks"][0]["share"] = 1.5; }), "bricks[0].share: expected a fraction");
  expect_format_error(broken([](json& j) { j["bricks"][0]["name"] = 7; }), "bricks[0].name: expected a string");
  expect_format_error(broken([](json& j) { j["run"]["peaks"]["gb_per_second"] = 0; }), "run.peaks.gb_per_second");
  expect_format_error(broken([](json& j) { j["run"]["timeline"][0]["kind"] = "nap"; }), "run.timeline[0].kind");
  expect_format_error(broken([](json& j) { j["run"]["verdicts"][0]["passed"] = "yes"; }), "run.verdicts[0].passed");
}

TEST(HtmlReportInput, FilesThatCannotBeReadAreIoErrors) {
  EXPECT_THROW((void)read_report_input("/nonexistent/profile.json"), IoError);
  const auto folder = std::filesystem::temp_directory_path() / ("brick-report-" + std::to_string(getpid()));
  std::filesystem::create_directories(folder);
  const auto profile = folder / "profile.json";
  std::ofstream(profile) << sample_profile_json();
  EXPECT_THROW((void)read_report_input(profile, folder / "missing-graph.json"), IoError);
  std::ofstream(folder / "bad-graph.json") << R"({"format": "brick.profile"})";
  EXPECT_THROW((void)read_report_input(profile, folder / "bad-graph.json"), FormatError);
  std::filesystem::remove_all(folder);
}

TEST(HtmlReportInput, TheGraphsTimelineReplacesTheProfiles) {
  const auto folder = std::filesystem::temp_directory_path() / ("brick-report-g-" + std::to_string(getpid()));
  std::filesystem::create_directories(folder);
  json profile = json::parse(sample_profile_json());
  profile["run"]["timeline"] = json::array();
  std::ofstream(folder / "profile.json") << profile.dump();
  std::ofstream(folder / "graph.json") << graph::to_json(sample_graph());
  EXPECT_TRUE(read_report_input(folder / "profile.json").run.timeline.empty());
  const ReportInput input = read_report_input(folder / "profile.json", folder / "graph.json");
  EXPECT_EQ(input.run.timeline.size(), 8u);
  EXPECT_EQ(input.run.timeline_tokens, 1u);
  std::filesystem::remove_all(folder);
}

TEST(HtmlReportContract, InputItWouldNotReadIsInvalidArgument) {
  ReportInput input = parse_report_input(sample_profile_json());
  ReportInput nan = input;
  nan.bricks[0].gb_per_second = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW((void)to_html(nan), InvalidArgument);
  ReportInput half_budget = input;
  half_budget.bricks[0].utilisation.reset();
  EXPECT_THROW((void)to_html(half_budget), InvalidArgument);
  ReportInput peaks = input;
  peaks.run.peaks->gb_per_second = -1;
  EXPECT_THROW((void)to_html(peaks), InvalidArgument);
  RunFacts facts = sample_facts();
  facts.title = "\xff";
  EXPECT_THROW((void)to_profile_json(BrickProfiler(), facts), InvalidArgument);
}

TEST(HtmlReportContract, TheFileIsWrittenWholeOrNotAtAll) {
  const auto folder = std::filesystem::temp_directory_path() / ("brick-report-w-" + std::to_string(getpid()));
  std::filesystem::create_directories(folder);
  const ReportInput input = parse_report_input(sample_profile_json());
  write_html_report(folder / "report.html", input);
  std::ifstream in(folder / "report.html");
  const std::string written((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(written, to_html(input));
  EXPECT_THROW(write_html_report(folder / "missing" / "report.html", input), IoError);
  std::filesystem::remove_all(folder);
}

}  // namespace
}  // namespace brick::report
