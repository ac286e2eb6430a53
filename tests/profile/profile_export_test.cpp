#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "brick/core/error.hpp"
#include "brick/profile/profiler.hpp"

namespace brick {
namespace {

using nlohmann::json;

ProfilerOptions manual(ManualClock& clock, SyncMode mode = SyncMode::Eager,
                       std::size_t trace_capacity = 0) {
  ProfilerOptions options;
  options.clock = ClockSource::Manual;
  options.manual_clock = &clock;
  options.sync_mode = mode;
  options.trace_capacity_per_thread = trace_capacity;
  return options;
}

void run(BrickProfiler& profiler, ManualClock& clock, BrickId id, std::uint64_t ns,
         std::uint64_t elements = 1, std::uint64_t bytes = 0, std::uint64_t flops = 0) {
  ProfileTimer timer = profiler.start(id);
  clock.advance(std::chrono::nanoseconds(ns));
  profiler.stop(timer, elements, bytes, flops);
}

// --- JSON
// -------------------------------------------------------------------------------------------

TEST(ProfileJson, ParsesBackWithTheDocumentedSchemaAndValues) {
  ManualClock clock;
  BrickProfiler profiler(manual(clock, SyncMode::Deferred));
  profiler.set_budget(BrickId::QkvProjection, TokenBudget::from_us_per_token(1.0));
  profiler.begin_layer(0);
  run(profiler, clock, BrickId::RmsNorm, 100, 1, 4096, 1000);
  run(profiler, clock, BrickId::QkvProjection, 500, 1, 8000, 4000);
  run(profiler, clock, BrickId::QkvProjection, 1500, 1, 8000, 4000);
  profiler.end_layer();
  ProfileTimer custom = profiler.start("custom_op");
  clock.advance(std::chrono::nanoseconds(50));
  profiler.stop(custom, 2);
  profiler.add_tokens(2);
  ProfileTimer twice = profiler.start(BrickId::RmsNorm);
  profiler.stop(twice);
  profiler.stop(twice);

  const json doc = json::parse(profiler.to_json());
  EXPECT_EQ(doc.at("schema"), "brick.profile");
  EXPECT_EQ(doc.at("version"), 1);
  EXPECT_EQ(doc.at("clock").at("source"), "manual");
  EXPECT_EQ(doc.at("clock").at("ns_per_tick"), 1.0);
  EXPECT_EQ(doc.at("sync_mode"), "deferred");
  EXPECT_EQ(doc.at("enabled"), true);
  EXPECT_EQ(doc.at("total_ns"), 2150u);
  EXPECT_EQ(doc.at("total_tokens"), 2u);

  const json& bricks = doc.at("bricks");
  ASSERT_EQ(bricks.size(), 3u);
  EXPECT_EQ(bricks[0].at("name"), "QkvProjection");
  EXPECT_EQ(bricks[1].at("name"), "RmsNorm");
  EXPECT_EQ(bricks[2].at("name"), "custom_op");
  for (std::size_t i = 1; i < bricks.size(); ++i) {
    EXPECT_GE(bricks[i - 1].at("total_ns").get<std::uint64_t>(),
              bricks[i].at("total_ns").get<std::uint64_t>());
  }
  const json& qkv = bricks[0];
  const BrickStats stats = profiler.brick_stats(BrickId::QkvProjection);
  EXPECT_EQ(qkv.at("id"), index(BrickId::QkvProjection));
  EXPECT_EQ(qkv.at("category"), "Attention");
  EXPECT_EQ(qkv.at("count"), 2u);
  EXPECT_EQ(qkv.at("total_ns"), 2000u);
  EXPECT_EQ(qkv.at("min_ns"), 500u);
  EXPECT_EQ(qkv.at("max_ns"), 1500u);
  EXPECT_DOUBLE_EQ(qkv.at("mean_ns").get<double>(), 1000.0);
  EXPECT_DOUBLE_EQ(qkv.at("stddev_ns").get<double>(), 500.0);
  EXPECT_EQ(qkv.at("p50_ns"), stats.percentile_ns(0.5));
  EXPECT_EQ(qkv.at("p99_ns"), 1500u);
  EXPECT_EQ(qkv.at("p999_ns"), 1500u);
  EXPECT_EQ(qkv.at("p90_ns"), 1500u);
  EXPECT_EQ(qkv.at("elements"), 2u);
  EXPECT_EQ(qkv.at("bytes"), 16000u);
  EXPECT_EQ(qkv.at("flops"), 8000u);
  EXPECT_DOUBLE_EQ(qkv.at("share").get<double>(), 2000.0 / 2150.0);
  EXPECT_DOUBLE_EQ(qkv.at("us_per_token").get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(qkv.at("tokens_per_second").get<double>(), 1e6);
  EXPECT_DOUBLE_EQ(qkv.at("gb_per_second").get<double>(), 8.0);
  EXPECT_DOUBLE_EQ(qkv.at("gflop_per_second").get<double>(), 4.0);
  EXPECT_DOUBLE_EQ(qkv.at("budget").at("us_per_token").get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(qkv.at("budget").at("utilisation").get<double>(), 1.0);
  EXPECT_TRUE(bricks[1].at("budget").is_null());
  EXPECT_TRUE(bricks[2].at("id").is_null());
  EXPECT_EQ(bricks[2].at("category"), "Other");

  const json& categories = doc.at("categories");
  ASSERT_EQ(categories.size(), kBrickCategoryCount);
  EXPECT_EQ(categories[1].at("name"), "Attention");
  EXPECT_EQ(categories[1].at("total_ns"), 2000u);
  EXPECT_EQ(categories[0].at("total_ns"), 100u);
  EXPECT_EQ(doc.at("layers").at("count"), 1u);
  EXPECT_EQ(doc.at("layers").at("wall_ns"), 2100u);
  EXPECT_EQ(doc.at("layers").at("attributed_ns"), 2100u);
  EXPECT_EQ(doc.at("misuse").at("stop_inactive_timer"), 1u);
  EXPECT_EQ(doc.at("misuse").at("foreign_timer"), 0u);
  EXPECT_EQ(doc.at("misuse").at("invalid_brick_id"), 0u);
  EXPECT_EQ(doc.at("trace").at("dropped"), 0u);
}

// --- Chrome trace
// -----------------------------------------------------------------------------------

std::int64_t ns_of(const json& microseconds) {
  return std::llround(microseconds.get<double>() * 1000.0);
}

// The parts of the Trace Event Format this exporter uses: required fields and their types, and X
// events on one thread either nested or disjoint. Returns the X events by tid.
std::map<std::int64_t, std::vector<json>> validate_trace(const json& trace) {
  std::map<std::int64_t, std::vector<json>> by_thread;
  EXPECT_TRUE(trace.is_object());
  EXPECT_TRUE(trace.at("traceEvents").is_array());
  std::set<std::int64_t> named_threads;
  for (const json& e : trace.at("traceEvents")) {
    EXPECT_TRUE(e.at("name").is_string()) << e;
    EXPECT_TRUE(e.at("ph").is_string()) << e;
    EXPECT_TRUE(e.at("pid").is_number_integer()) << e;
    EXPECT_TRUE(e.at("tid").is_number_integer()) << e;
    const std::string ph = e.at("ph");
    if (ph == "M") {
      EXPECT_TRUE(e.at("name") == "thread_name" || e.at("name") == "process_name") << e;
      EXPECT_TRUE(e.at("args").at("name").is_string()) << e;
      if (e.at("name") == "thread_name") named_threads.insert(e.at("tid").get<std::int64_t>());
    } else {
      EXPECT_EQ(ph, "X") << e;
      EXPECT_TRUE(e.at("ts").is_number()) << e;
      EXPECT_TRUE(e.at("dur").is_number()) << e;
      EXPECT_GE(e.at("ts").get<double>(), 0.0) << e;
      EXPECT_GE(e.at("dur").get<double>(), 0.0) << e;
      EXPECT_TRUE(e.at("cat").is_string()) << e;
      EXPECT_TRUE(e.at("args").is_object()) << e;
      if (e.at("cat") != "layer") {
        EXPECT_TRUE(e.at("args").at("brick").is_string()) << e;
        EXPECT_TRUE(e.at("args").at("brick_id").is_number_unsigned() ||
                    e.at("args").at("brick_id").is_null())
            << e;
        EXPECT_TRUE(e.at("args").at("elements").is_number_unsigned()) << e;
        EXPECT_TRUE(e.at("args").at("bytes").is_number_unsigned()) << e;
      }
      if (e.at("args").contains("layer")) {
        EXPECT_TRUE(e.at("args").at("layer").is_number_integer()) << e;
      }
      by_thread[e.at("tid").get<std::int64_t>()].push_back(e);
    }
  }
  for (auto& [tid, events] : by_thread) {
    EXPECT_TRUE(named_threads.count(tid)) << "tid " << tid << " has no thread_name event";
    std::stable_sort(events.begin(), events.end(), [](const json& a, const json& b) {
      return ns_of(a.at("ts")) != ns_of(b.at("ts")) ? ns_of(a.at("ts")) < ns_of(b.at("ts"))
                                                    : ns_of(a.at("dur")) > ns_of(b.at("dur"));
    });
    std::vector<std::int64_t> open_ends;
    for (const json& e : events) {
      const std::int64_t begin = ns_of(e.at("ts"));
      const std::int64_t end = begin + ns_of(e.at("dur"));
      while (!open_ends.empty() && open_ends.back() <= begin) open_ends.pop_back();
      if (!open_ends.empty()) {
        EXPECT_LE(end, open_ends.back()) << "overlaps its parent on tid " << tid << ": " << e;
      }
      open_ends.push_back(end);
    }
  }
  EXPECT_TRUE(trace.at("otherData").at("dropped_events").is_number_unsigned());
  return by_thread;
}

TEST(ChromeTrace, FollowsTheTraceEventSchemaWithNsPrecisionAndNesting) {
  ManualClock clock;
  clock.advance_to(
      Clock::time_point(std::chrono::nanoseconds(1'000'000)));  // the epoch: ts counts from here
  BrickProfiler profiler(manual(clock, SyncMode::Eager, 1000));
  profiler.set_thread_name("main");
  clock.advance(std::chrono::nanoseconds(1001));
  profiler.begin_layer(7);
  {
    ProfileScope outer(profiler, BrickId::GateUpProjection, 4, 4096);
    clock.advance(std::chrono::nanoseconds(10));
    run(profiler, clock, BrickId::QuantizeActivation, 3, 4, 128);
    clock.advance(std::chrono::nanoseconds(5));
  }
  run(profiler, clock, BrickId::DownProjection, 250, 4, 2048);
  profiler.end_layer();
  ProfileTimer named = profiler.start("custom \"op\"");
  clock.advance(std::chrono::nanoseconds(2));
  profiler.stop(named, 1);
  std::thread([&] {
    profiler.set_sync_mode(SyncMode::Deferred);
    profiler.begin_layer(8);
    run(profiler, clock, BrickId::RmsNorm, 40, 4, 64);
    run(profiler, clock, BrickId::Activation, 60, 4, 64);
    profiler.end_layer();
  }).join();

  const json trace = json::parse(profiler.to_chrome_trace());
  const auto by_thread = validate_trace(trace);
  ASSERT_EQ(by_thread.size(), 2u);
  const std::vector<json>& main_events = by_thread.begin()->second;
  ASSERT_EQ(main_events.size(), 5u);  // layer, GateUp, Quantize, Down, named
  EXPECT_EQ(main_events[0].at("name"), "layer 7");
  EXPECT_EQ(ns_of(main_events[0].at("ts")), 1001);
  EXPECT_DOUBLE_EQ(main_events[0].at("ts").get<double>(), 1.001);
  EXPECT_EQ(ns_of(main_events[0].at("dur")), 268);
  const json& gate_up = main_events[1];
  EXPECT_EQ(gate_up.at("name"), "GateUpProjection");
  EXPECT_EQ(gate_up.at("cat"), "Ffn");
  EXPECT_EQ(ns_of(gate_up.at("dur")), 18);
  EXPECT_EQ(gate_up.at("args").at("brick_id"), index(BrickId::GateUpProjection));
  EXPECT_EQ(gate_up.at("args").at("layer"), 7);
  EXPECT_EQ(gate_up.at("args").at("elements"), 4u);
  EXPECT_EQ(gate_up.at("args").at("bytes"), 4096u);
  EXPECT_EQ(main_events[2].at("name"), "QuantizeActivation");
  EXPECT_DOUBLE_EQ(main_events[2].at("dur").get<double>(), 0.003);
  EXPECT_EQ(main_events[4].at("name"), "custom \"op\"");
  EXPECT_TRUE(main_events[4].at("args").at("brick_id").is_null());
  EXPECT_FALSE(main_events[4].at("args").contains("layer"));
  const std::vector<json>& worker_events = std::next(by_thread.begin())->second;
  ASSERT_EQ(worker_events.size(), 3u);
  EXPECT_EQ(worker_events[0].at("name"), "layer 8");
  EXPECT_EQ(worker_events[1].at("name"), "RmsNorm");
  EXPECT_EQ(ns_of(worker_events[1].at("dur")), 40);
  EXPECT_EQ(worker_events[2].at("args").at("layer"), 8);

  bool main_named = false;
  for (const json& e : trace.at("traceEvents")) {
    if (e.at("ph") == "M" && e.at("name") == "thread_name" && e.at("args").at("name") == "main")
      main_named = true;
  }
  EXPECT_TRUE(main_named);
  EXPECT_EQ(trace.at("otherData").at("clock"), "manual");
  EXPECT_EQ(trace.at("otherData").at("dropped_events"), 0u);
}

TEST(ChromeTrace, BoundedBufferCountsDroppedEventsAndWritesTheCount) {
  ManualClock clock;
  BrickProfiler profiler(manual(clock, SyncMode::Eager, 3));
  for (int i = 0; i < 5; ++i) run(profiler, clock, BrickId::Sampling, 10);
  const json trace = json::parse(profiler.to_chrome_trace());
  const auto by_thread = validate_trace(trace);
  ASSERT_EQ(by_thread.size(), 1u);
  EXPECT_EQ(by_thread.begin()->second.size(), 3u);
  EXPECT_EQ(trace.at("otherData").at("dropped_events"), 2u);
  EXPECT_EQ(trace.at("otherData").at("trace_capacity_per_thread"), 3u);
  EXPECT_EQ(profiler.dropped_trace_events(), 2u);
  EXPECT_EQ(profiler.brick_stats(BrickId::Sampling).count, 5u) << "statistics keep every execution";
  EXPECT_NE(profiler.summary().find("2 dropped"), std::string::npos);
  EXPECT_EQ(json::parse(profiler.to_json()).at("trace").at("dropped"), 2u);

  profiler.set_trace_capacity(10);
  EXPECT_EQ(profiler.trace_capacity(), 10u);
  EXPECT_EQ(profiler.trace_event_count(), 0u);
  for (int i = 0; i < 5; ++i) run(profiler, clock, BrickId::Sampling, 10);
  EXPECT_EQ(profiler.trace_event_count(), 5u);
  EXPECT_EQ(profiler.dropped_trace_events(), 0u);
}

TEST(ChromeTrace, WithoutCapacityRecordsNoEvents) {
  ManualClock clock;
  BrickProfiler profiler(manual(clock));
  run(profiler, clock, BrickId::Sampling, 10);
  const json trace = json::parse(profiler.to_chrome_trace());
  EXPECT_TRUE(validate_trace(trace).empty());
}

// --- Prometheus
// ----------------------------------------------------------------------------------------

struct Sample {
  std::string name;
  std::map<std::string, std::string> labels;
  std::string value;
};

bool is_metric_name(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':';
  });
}

// Reads `key="value"` pairs separated by commas; the value keeps its \\, \" and \n escapes as
// written.
bool parse_labels(std::string_view text, std::map<std::string, std::string>& labels) {
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t eq = text.find('=', i);
    if (eq == std::string_view::npos || eq + 1 >= text.size() || text[eq + 1] != '"') return false;
    const std::string key(text.substr(i, eq - i));
    if (!is_metric_name(key)) return false;
    std::size_t j = eq + 2;
    std::string value;
    while (j < text.size() && text[j] != '"') {
      if (text[j] == '\\') {
        if (j + 1 >= text.size() ||
            std::string_view("\\\"n").find(text[j + 1]) == std::string_view::npos)
          return false;
        value += text[j];
        ++j;
      }
      value += text[j];
      ++j;
    }
    if (j >= text.size()) return false;
    labels[key] = value;
    i = j + 1;
    if (i < text.size()) {
      if (text[i] != ',') return false;
      ++i;
    }
  }
  return true;
}

// A strict reading of the text exposition format: every sample belongs to a family whose HELP and
// TYPE came first; label values are quoted with \\, \" and \n escapes.
std::vector<Sample> parse_exposition(const std::string& text,
                                     std::map<std::string, std::string>& types) {
  std::vector<Sample> samples;
  std::set<std::string> helped;
  std::istringstream lines(text);
  std::string line;
  const std::set<std::string> known_types = {"counter", "gauge", "histogram", "summary", "untyped"};
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string first, second, name, rest;
    if (line.starts_with("# HELP ")) {
      words >> first >> second >> name;
      std::getline(words, rest);
      EXPECT_TRUE(is_metric_name(name) && rest.size() > 1) << line;
      helped.insert(name);
    } else if (line.starts_with("# TYPE ")) {
      std::string type;
      words >> first >> second >> name >> type;
      EXPECT_TRUE(is_metric_name(name) && known_types.count(type) && words.eof()) << line;
      EXPECT_TRUE(helped.count(name)) << "TYPE before HELP: " << line;
      EXPECT_FALSE(types.count(name)) << "family declared twice: " << line;
      types[name] = type;
    } else {
      const std::size_t space = line.rfind(' ');
      const std::size_t brace = line.find('{');
      const std::size_t name_end = std::min(brace, space);
      Sample s{
          line.substr(0, name_end), {}, space == std::string::npos ? "" : line.substr(space + 1)};
      EXPECT_TRUE(is_metric_name(s.name)) << "not exposition format: '" << line << "'";
      EXPECT_FALSE(s.value.empty()) << line;
      if (brace != std::string::npos && brace < space) {
        const std::size_t close = line.rfind('}', space);
        EXPECT_TRUE(close != std::string::npos && close + 1 == space) << line;
        EXPECT_TRUE(
            parse_labels(std::string_view(line).substr(brace + 1, close - brace - 1), s.labels))
            << line;
      }
      std::string family = s.name;
      for (const std::string suffix : {"_bucket", "_sum", "_count"}) {
        const std::string base =
            s.name.substr(0, s.name.size() - std::min(s.name.size(), suffix.size()));
        if (s.name.ends_with(suffix) && types.count(base) && types[base] == "histogram")
          family = base;
      }
      EXPECT_TRUE(types.count(family)) << "sample without TYPE: " << line;
      samples.push_back(std::move(s));
    }
  }
  return samples;
}

TEST(Prometheus, ExpositionHasCountersAndACumulativeHistogramPerBrick) {
  ManualClock clock;
  BrickProfiler profiler(manual(clock));
  for (const std::uint64_t ns : {200u, 2'000u, 2'000u, 20'000u, 3'000'000'000u}) {
    run(profiler, clock, BrickId::AttentionScore, ns, 2, 100, 50);
  }
  ProfileTimer named = profiler.start("we\"ird\\name");
  clock.advance(std::chrono::nanoseconds(5));
  profiler.stop(named);
  profiler.add_tokens(9);

  std::map<std::string, std::string> types;
  const std::vector<Sample> samples = parse_exposition(profiler.to_prometheus(), types);
  EXPECT_EQ(types["brick_executions_total"], "counter");
  EXPECT_EQ(types["brick_duration_seconds"], "histogram");
  EXPECT_EQ(types["brick_tokens_total"], "counter");

  std::vector<std::pair<double, std::uint64_t>> buckets;
  std::uint64_t inf = 0, count = 0;
  double sum = 0;
  bool saw_named = false;
  for (const Sample& s : samples) {
    if (s.labels.count("brick") && s.labels.at("brick") == "we\\\"ird\\\\name") saw_named = true;
    if (!s.labels.count("brick") || s.labels.at("brick") != "AttentionScore") continue;
    EXPECT_EQ(s.labels.at("category"), "Attention");
    const std::map<std::string, std::string> counters = {{"brick_executions_total", "5"},
                                                         {"brick_elements_total", "10"},
                                                         {"brick_bytes_total", "500"},
                                                         {"brick_flops_total", "250"}};
    if (const auto it = counters.find(s.name); it != counters.end()) {
      EXPECT_EQ(s.value, it->second) << s.name;
    }
    if (s.name == "brick_duration_seconds_bucket") {
      if (s.labels.at("le") == "+Inf")
        inf = std::stoull(s.value);
      else
        buckets.emplace_back(std::stod(s.labels.at("le")), std::stoull(s.value));
    }
    if (s.name == "brick_duration_seconds_count") count = std::stoull(s.value);
    if (s.name == "brick_duration_seconds_sum") sum = std::stod(s.value);
  }
  EXPECT_TRUE(saw_named);
  ASSERT_FALSE(buckets.empty());
  for (std::size_t i = 1; i < buckets.size(); ++i) {
    EXPECT_GT(buckets[i].first, buckets[i - 1].first);
    EXPECT_GE(buckets[i].second, buckets[i - 1].second) << "buckets must be cumulative";
  }
  const auto at = [&](double le) {
    for (const auto& [bound, n] : buckets) {
      if (std::abs(bound - le) < le * 1e-9) return n;
    }
    ADD_FAILURE() << "no bucket le=" << le;
    return std::uint64_t{0};
  };
  EXPECT_EQ(at(1e-7), 0u);
  EXPECT_EQ(at(2.5e-7), 1u);
  EXPECT_EQ(at(2.5e-6), 3u);
  EXPECT_EQ(at(2.5e-5), 4u);
  EXPECT_EQ(at(10.0), 5u);
  EXPECT_EQ(inf, 5u);
  EXPECT_EQ(count, 5u);
  EXPECT_DOUBLE_EQ(sum, 3.0000242);
  bool tokens = false;
  for (const Sample& s : samples) {
    if (s.name == "brick_tokens_total") tokens = s.value == "9";
  }
  EXPECT_TRUE(tokens);
}

// --- summary and files
// -----------------------------------------------------------------------------------

// --- names ---------------------------------------------------------------------------------------

// A name that is not UTF-8 used to make to_json() and to_chrome_trace() throw nlohmann's
// type_error and to_prometheus() write a label no parser accepts; it is refused where it enters.
TEST(ProfileNames, NamesThatAreNotUtf8AreRefusedWhereTheyEnter) {
  ManualClock clock;
  BrickProfiler profiler(manual(clock, SyncMode::Eager, 16));
  for (const std::string bad : {"bad\xff", "cut\xc3", "overlong\xc0\xaf", "surrogate\xed\xa0\x80",
                                "past-max\xf4\x90\x80\x80", "lone\x80"}) {
    SCOPED_TRACE(bad);
    try {
      (void)profiler.start(bad);
      ADD_FAILURE() << "accepted";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("not valid UTF-8"), std::string::npos) << e.what();
    }
    EXPECT_THROW(profiler.set_thread_name(bad), InvalidArgument);
  }
  EXPECT_TRUE(profiler.named_bricks().empty());
}

TEST(ProfileNames, Utf8NamesSurviveEveryExport) {
  ManualClock clock;
  BrickProfiler profiler(manual(clock, SyncMode::Eager, 16));
  const std::string brick = "na\xc3\xafve \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\xa7\xb1 \"q\" \\ end";
  const std::string thread = "d\xc3\xa9" "codeur";
  profiler.set_thread_name(thread);
  ProfileTimer timer = profiler.start(brick);
  clock.advance(std::chrono::nanoseconds(40));
  profiler.stop(timer, 1);

  const json doc = json::parse(profiler.to_json());
  EXPECT_EQ(doc["bricks"][0]["name"], brick);
  const json trace = json::parse(profiler.to_chrome_trace());
  std::set<std::string> names;
  for (const json& event : trace["traceEvents"]) {
    names.insert(event["name"].get<std::string>());
    if (event["name"] == "thread_name") names.insert(event["args"]["name"].get<std::string>());
  }
  EXPECT_TRUE(names.count(brick)) << trace.dump();
  EXPECT_TRUE(names.count(thread)) << trace.dump();
  const std::string prometheus = profiler.to_prometheus();
  EXPECT_NE(prometheus.find("brick=\"na\xc3\xafve \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\xa7\xb1 \\\"q\\\" \\\\ end\""),
            std::string::npos)
      << prometheus;
}

TEST(ProfileSummary, SortsByTotalTimeAndShowsBudgetsCategoriesAndClock) {
  ManualClock clock;
  BrickProfiler profiler(manual(clock));
  profiler.set_budget(BrickId::DownProjection, TokenBudget::from_us_per_token(2.0));
  run(profiler, clock, BrickId::RmsNorm, 1'000, 1);
  run(profiler, clock, BrickId::DownProjection, 4'000, 4);
  run(profiler, clock, BrickId::AttentionScore, 2'000, 1);
  const std::string text = profiler.summary();
  const auto down = text.find("DownProjection");
  const auto score = text.find("AttentionScore");
  const auto norm = text.find("RmsNorm");
  ASSERT_NE(down, std::string::npos);
  EXPECT_LT(down, score);
  EXPECT_LT(score, norm);
  EXPECT_NE(text.find("clock manual"), std::string::npos);
  EXPECT_NE(text.find("sync eager"), std::string::npos);
  EXPECT_NE(text.find("budget us"), std::string::npos);
  const std::string down_line = text.substr(down, text.find('\n', down) - down);
  EXPECT_NE(down_line.find("2.000"), std::string::npos) << down_line;  // budget us/token
  EXPECT_NE(down_line.find("50%"), std::string::npos) << down_line;    // 1 us/token of 2
  EXPECT_NE(down_line.find("57.1"), std::string::npos) << down_line;   // % of total
  const auto category = text.find("category");
  ASSERT_NE(category, std::string::npos);
  EXPECT_LT(text.find("Ffn", category), text.find("Attention", category));
  EXPECT_LT(text.find("Attention", category), text.find("Norm", category));
}

TEST(ProfileFiles, WritesEveryExportAndRaisesIoErrorWhenItCannot) {
  ManualClock clock;
  BrickProfiler profiler(manual(clock, SyncMode::Eager, 16));
  run(profiler, clock, BrickId::Embedding, 10);
  const auto dir =
      std::filesystem::temp_directory_path() /
      ("brick_profile_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
       "_" + std::to_string(reinterpret_cast<std::uintptr_t>(&profiler)));
  std::filesystem::create_directories(dir);
  profiler.write_json(dir / "profile.json");
  profiler.write_chrome_trace(dir / "trace.json");
  profiler.write_prometheus(dir / "metrics.prom");
  std::ifstream json_file(dir / "profile.json");
  EXPECT_EQ(json::parse(json_file).at("schema"), "brick.profile");
  std::ifstream trace_file(dir / "trace.json");
  EXPECT_EQ(validate_trace(json::parse(trace_file)).size(), 1u);
  EXPECT_GT(std::filesystem::file_size(dir / "metrics.prom"), 0u);
  std::filesystem::remove_all(dir);

  const auto missing = dir / "no" / "such" / "dir" / "x.json";
  EXPECT_THROW(profiler.write_json(missing), IoError);
  EXPECT_THROW(profiler.write_chrome_trace(missing), IoError);
  EXPECT_THROW(profiler.write_prometheus(missing), IoError);
}

}  // namespace
}  // namespace brick
