// brick run: the main job. Opens a llama GGUF (or the default synthetic model), generates text with
// a decoder built from bricks, streams it, and reports llama.cpp-style timings, the per-brick
// profile, budget verdicts and the verification of every brick.
#include <fmt/format.h>
#include <fmt/std.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "brick/core/error.hpp"
#include "brick/model/generation.hpp"
#include "brick/model/llama_decoder.hpp"
#include "brick/model/llama_model.hpp"
#include "brick/model/tokenizer.hpp"
#include "brick/profile/profiler.hpp"
#include "brick/profile/profiling_observer.hpp"
#include "brick/graph/graph_recorder.hpp"
#include "brick/report/html_report.hpp"
#include "brick/runtime/atomic_file.hpp"
#include "brick/trace/model_tracer.hpp"
#include "commands.hpp"
#include "default_model.hpp"
#include "graph_output.hpp"

namespace brick::cli {
namespace {

struct RunOptions {
  std::string model;
  std::size_t n_predict = 32;
  std::string prompt = "Once upon a time";
  std::string prompt_tokens;
  std::string force_tokens;
  std::size_t top_logits = 0;
  std::size_t threads = 0;
  std::size_t ctx = 0;
  model::SamplingParams sampling;
  std::string kv_type = "f16";
  std::string backend = "auto";
  double budget_gb_per_second = 10.0;
  std::string checks = "cheap";
  bool json = false;
  bool profile = true;
  bool repack = true;
  std::string sync = "deferred";
  std::string trace_path;
  std::size_t trace_events = 1 << 20;
  std::string profile_json_path;
  std::string prometheus_path;
  std::string report_path;
  std::string model_trace_path;
  std::string trace_level = "lightweight";
  std::uint64_t trace_sample_every = 1;
  std::uint64_t trace_quant_every = trace::TraceConfig{}.quant_error_every;
  std::uint64_t trace_lens_every = trace::TraceConfig{}.logit_lens_every;
  GraphOutput graph;
};

constexpr std::size_t kDefaultContextCap = 4096;

// The option checks keep only the set's own spellings.
CheckPolicy parse_checks(const std::string& text) {
  if (text == "all") return CheckPolicy::All;
  if (text == "none") return CheckPolicy::None;
  return CheckPolicy::Cheap;
}

// "1,15,27" or "1 15 27".
std::vector<model::TokenId> parse_ids(const std::string& text, const char* what) {
  std::vector<model::TokenId> ids;
  const char* p = text.data();
  const char* end = p + text.size();
  while (p < end) {
    if (*p == ',' || *p == ' ') {
      ++p;
      continue;
    }
    model::TokenId id = 0;
    const auto [next, error] = std::from_chars(p, end, id);
    if (error != std::errc() || (next < end && *next != ',' && *next != ' ')) {
      throw InvalidArgument(
          fmt::format("{}: '{}' is not a list of token ids (e.g. 1,15,27)", what, text));
    }
    ids.push_back(id);
    p = next;
  }
  return ids;
}

std::uint64_t physical_memory() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0
             ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page)
             : 0;
}

// Refuses a model and context that cannot be resident at once: the weights are mapped, so an
// oversized model would not fail but page from disk for every token.
void require_memory(const model::LlamaModel& m, std::size_t n_ctx, KvType kv) {
  const auto& c = m.config();
  const double kv_bytes =
      2.0 * static_cast<double>(c.n_layer * n_ctx * c.kv_dim()) * (kv == KvType::F16 ? 2 : 4);
  const double needed = static_cast<double>(m.file().file_size()) + kv_bytes;
  const auto available = static_cast<double>(physical_memory());
  if (available > 0 && needed > available) {
    throw CapacityError(
        fmt::format("{} needs {:.2f} GB resident ({:.2f} GB of weights, {:.2f} GB of KV cache for "
                    "{} positions); this machine has {:.2f} GB",
                    m.file().name(), needed / 1e9, static_cast<double>(m.file().file_size()) / 1e9,
                    kv_bytes / 1e9, n_ctx, available / 1e9));
  }
}

struct VerifySummary {
  std::size_t bricks = 0;
  std::size_t assertions = 0;
  std::size_t failed = 0;
  std::vector<std::string> failures;
  std::string worst_brick;  // largest Equivalence absolute difference
  AssertionOutcome worst;
};

VerifySummary summarize(const std::vector<VerifyReport>& reports) {
  VerifySummary summary;
  summary.bricks = reports.size();
  for (const VerifyReport& report : reports) {
    for (const AssertionOutcome& outcome : report.assertions) {
      ++summary.assertions;
      if (!outcome.passed) {
        ++summary.failed;
        summary.failures.push_back(
            fmt::format("{}: {} {}", report.brick, outcome.name, outcome.summary()));
      }
      if (outcome.kind == AssertionKind::Equivalence &&
          (summary.worst_brick.empty() || outcome.max_abs_error > summary.worst.max_abs_error)) {
        summary.worst_brick = report.brick;
        summary.worst = outcome;
      }
    }
  }
  return summary;
}

// Watches every brick run on its way to the profiler: gives the profiler each brick kind's budget
// (every block has the same shapes, so the same budgets), and tallies budget misses and failed
// assertions per kind.
class RunMonitor final : public LayerObserver {
 public:
  struct Kind {
    std::uint64_t runs = 0;
    std::uint64_t over_budget = 0;
    double worst_utilisation = 0.0;
    std::string worst_brick;
  };

  RunMonitor(LayerObserver& next, BrickProfiler& profiler) : next_(next), profiler_(profiler) {}

  void on_layer_begin(std::size_t layer_index) override { next_.on_layer_begin(layer_index); }
  void on_layer_end() override { next_.on_layer_end(); }
  void on_tokens(std::size_t first, std::size_t count) override { next_.on_tokens(first, count); }
  void on_brick_begin(BrickId id, std::string_view name) override {
    next_.on_brick_begin(id, name);
  }
  void on_brick_output(const RunReport& report, std::span<float> output) override {
    next_.on_brick_output(report, output);
  }
  void on_brick_end(BrickId id, std::string_view name, const RunReport* report) override {
    next_.on_brick_end(id, name, report);
    if (report == nullptr || index(id) >= kBrickIdCount) return;
    Kind& kind = kinds_[index(id)];
    if (kind.runs++ == 0 && report->metrics.budget_us_per_token > 0 && !profiler_.budget(id)) {
      profiler_.set_budget(id, TokenBudget::from_us_per_token(report->metrics.budget_us_per_token));
    }
    if (!report->metrics.budget_met) ++kind.over_budget;
    if (report->metrics.utilisation > kind.worst_utilisation) {
      kind.worst_utilisation = report->metrics.utilisation;
      kind.worst_brick = std::string(report->brick);
    }
    for (const AssertionOutcome& outcome : report->assertions) {
      if (outcome.evaluated && !outcome.passed) {
        ++failed_;
        if (first_failure_.empty())
          first_failure_ = fmt::format("{}: {} {}", report->brick, outcome.name, outcome.summary());
      }
    }
  }

  const std::array<Kind, kBrickIdCount>& kinds() const noexcept { return kinds_; }
  std::uint64_t assertions_failed() const noexcept { return failed_; }
  const std::string& first_failure() const noexcept { return first_failure_; }

 private:
  LayerObserver& next_;
  BrickProfiler& profiler_;
  std::array<Kind, kBrickIdCount> kinds_{};
  std::uint64_t failed_ = 0;
  std::string first_failure_;
};

const model::LlamaDecoder::LayerTime* slowest_block(const model::LlamaDecoder& decoder) {
  const auto times = decoder.layer_times();
  if (times.size() < 3) return nullptr;
  const auto blocks = times.subspan(1, times.size() - 2);
  return &*std::max_element(blocks.begin(), blocks.end(),
                            [](const auto& a, const auto& b) { return a.ns < b.ns; });
}

double median_block_ns(const model::LlamaDecoder& decoder) {
  const auto times = decoder.layer_times();
  std::vector<std::uint64_t> ns;
  for (std::size_t i = 1; i + 1 < times.size(); ++i) ns.push_back(times[i].ns);
  if (ns.empty()) return 0.0;
  std::nth_element(ns.begin(), ns.begin() + static_cast<std::ptrdiff_t>(ns.size() / 2), ns.end());
  return static_cast<double>(ns[ns.size() / 2]);
}

struct Run {
  const model::LlamaModel& model;
  const model::LlamaDecoder& decoder;
  const model::Generation& generation;
  const VerifySummary& verified;
  const BrickProfiler& profiler;
  const RunMonitor& monitor;
  std::string text;
  double load_ms;
  std::size_t threads;
  const trace::ModelTracer* tracer;  // null when the model was not traced
};

// The model trace's outcome, after the run: where it went, what it holds, the first anomaly.
std::string model_trace_line(const RunOptions& o, const trace::ModelTracer& tracer) {
  const trace::TraceSummary summary = tracer.summary();
  std::string line = fmt::format("model trace: {} ({} level): {} records over {} forwards", o.model_trace_path,
                                 o.trace_level, summary.recorded_total(), summary.forwards);
  if (summary.quant.worst) {
    line += fmt::format("; worst quantized brick {} (cosine {:.6f}, {})", summary.quant.worst->brick.view(),
                        summary.quant.worst->error.cosine, name(summary.quant.worst->error.quant_class));
  }
  if (const auto anomaly = tracer.first_anomaly()) {
    line += fmt::format("\nfirst anomaly: {} at layer {}, {}, token {} (value {:.6g}); brick trace-summary {} says more",
                        name(anomaly->kind), anomaly->layer, name(anomaly->point), anomaly->token_pos, anomaly->value,
                        o.model_trace_path);
  } else {
    line += "; no anomaly";
  }
  return line + "\n";
}

void print_report(const RunOptions& o, const Run& r) {
  const auto& t = r.generation.timings;
  const double weight_bytes = r.model.weights().bytes();
  fmt::print("\n\n");
  fmt::print("load:    {:10.2f} ms\n", r.load_ms);
  fmt::print(
      "prompt:  {:10.2f} ms / {:4} tokens ({:8.2f} ms per token, {:9.2f} tokens per second)\n",
      t.prompt_ms, t.prompt_tokens,
      t.prompt_tokens ? t.prompt_ms / static_cast<double>(t.prompt_tokens) : 0.0,
      t.prompt_tokens_per_s());
  fmt::print("decode:  {:10.2f} ms / {:4} runs   ({:8.2f} ms per token, {:9.2f} tokens per second)",
             t.decode_ms, t.decoded_tokens,
             t.decoded_tokens ? t.decode_ms / static_cast<double>(t.decoded_tokens) : 0.0,
             t.decode_tokens_per_s());
  if (t.decoded_tokens > 0) {
    fmt::print(", weights read at {:.1f} GB/s", weight_bytes * t.decode_tokens_per_s() / 1e9);
  }
  fmt::print("\nsample:  {:10.2f} ms / {:4} tokens\n", t.sample_ms, r.generation.steps.size());
  if (o.profile) fmt::print("\n{}", r.profiler.summary());
  if (const auto* slowest = slowest_block(r.decoder); slowest && slowest->runs > 0) {
    const double median = median_block_ns(r.decoder);
    fmt::print("slowest block: {} at {:.1f} us per run ({:+.1f}% against the median block)\n",
               slowest->layer,
               static_cast<double>(slowest->ns) / 1e3 / static_cast<double>(slowest->runs),
               median > 0 ? 100.0 * (static_cast<double>(slowest->ns) / median - 1.0) : 0.0);
  }
  std::string over;
  for (BrickId id : all_brick_ids()) {
    const RunMonitor::Kind& kind = r.monitor.kinds()[index(id)];
    if (kind.over_budget > 0) {
      over += fmt::format("{}{} {}/{} (worst {:.0f}%, {})", over.empty() ? "" : "; ", name(id),
                          kind.over_budget, kind.runs, 100.0 * kind.worst_utilisation,
                          kind.worst_brick);
    }
  }
  fmt::print("budgets at {:g} GB/s: {}\n", o.budget_gb_per_second,
             over.empty() ? "every brick run within its budget" : "runs over budget: " + over);
  if (r.monitor.assertions_failed() > 0) {
    fmt::print("checks: {} assertions failed during the run; the first: {}\n",
               r.monitor.assertions_failed(), r.monitor.first_failure());
  }
  const VerifySummary& v = r.verified;
  fmt::print("verify: {} bricks, {} assertions, {} failed", v.bricks, v.assertions, v.failed);
  if (!v.worst_brick.empty()) {
    fmt::print("; largest gap to the reference {:.2g} absolute, in {} ({})", v.worst.max_abs_error,
               v.worst_brick, v.worst.name);
  }
  fmt::print("\n");
  for (const std::string& failure : v.failures) fmt::print("  {}\n", failure);
  if (r.tracer) fmt::print("{}", model_trace_line(o, *r.tracer));
}

void print_json(const RunOptions& o, const Run& r) {
  const auto& t = r.generation.timings;
  nlohmann::json out = {
      {"prompt", r.generation.prompt},
      {"generated", r.generation.generated},
      {"text", r.text},
      {"repacked", {{"matrices", r.decoder.repacked_matrices()}, {"bytes", r.decoder.repacked_bytes()}}},
      {"timings",
       {{"load_ms", r.load_ms},
        {"prompt_ms", t.prompt_ms},
        {"prompt_tokens_per_s", t.prompt_tokens_per_s()},
        {"decode_ms", t.decode_ms},
        {"decode_tokens_per_s", t.decode_tokens_per_s()}}},
      {"profile",
       o.profile ? nlohmann::json::parse(r.profiler.to_json()) : nlohmann::json(nullptr)},
      {"verify",
       {{"bricks", r.verified.bricks},
        {"assertions", r.verified.assertions},
        {"failed", r.verified.failed},
        {"failures", r.verified.failures}}},
  };
  if (r.tracer) {
    const trace::TraceSummary summary = r.tracer->summary();
    nlohmann::json anomaly = nullptr;
    if (const auto first = r.tracer->first_anomaly()) {
      anomaly = {{"kind", name(first->kind)},   {"layer", first->layer},
                 {"point", name(first->point)}, {"token_pos", first->token_pos},
                 {"value", first->value}};
    }
    out["model_trace"] = {{"path", o.model_trace_path},
                          {"level", o.trace_level},
                          {"records", summary.recorded_total()},
                          {"dropped", summary.dropped_total()},
                          {"first_anomaly", anomaly}};
  }
  if (o.top_logits > 0) {
    nlohmann::json steps = nlohmann::json::array();
    for (const model::GenerationStep& step : r.generation.steps) {
      nlohmann::json top = nlohmann::json::array();
      for (const model::TopLogit& l : step.top) top.push_back({{"id", l.id}, {"logit", l.logit}});
      steps.push_back({{"token", step.predicted}, {"top", top}});
    }
    out["steps"] = steps;
  }
  fmt::print("{}\n", out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
}

// What --profile-json and --report add to the profile: per-layer times, the machine's peaks, the
// last pass as a timeline (when the graph was recorded) and the run's verdicts.
report::RunFacts run_facts(const RunOptions& o, const Run& r, const graph::GraphRecorder* graph, ThreadPool& pool) {
  report::RunFacts facts;
  facts.title = r.model.name();
  facts.tokens = r.decoder.n_past();
  for (const auto& layer : r.decoder.layer_times()) facts.layers.push_back({std::string(layer.layer), layer.runs, layer.ns});
  facts.peaks = machine_peaks(pool);
  if (graph != nullptr) facts.timeline = report::last_pass_timeline(graph->graph(), facts.timeline_tokens);
  const VerifySummary& v = r.verified;
  std::string detail = fmt::format("{} bricks, {} assertions, {} failed", v.bricks, v.assertions, v.failed);
  if (!v.worst_brick.empty()) {
    detail += fmt::format("; largest gap to the reference {:.2g} absolute, in {} ({})", v.worst.max_abs_error,
                          v.worst_brick, v.worst.name);
  }
  facts.verdicts.push_back({"verify against the reference backend", v.failed == 0, detail});
  for (const std::string& failure : v.failures) facts.verdicts.push_back({"verify", false, failure});
  facts.verdicts.push_back({fmt::format("assertions on every call ({})", o.checks), r.monitor.assertions_failed() == 0,
                            r.monitor.assertions_failed() == 0
                                ? std::string("none failed")
                                : fmt::format("{} failed; the first: {}", r.monitor.assertions_failed(),
                                              r.monitor.first_failure())});
  for (BrickId id : all_brick_ids()) {
    const RunMonitor::Kind& kind = r.monitor.kinds()[index(id)];
    if (kind.runs == 0) continue;
    facts.verdicts.push_back(
        {fmt::format("budget of {} at {:g} GB/s", name(id), o.budget_gb_per_second), kind.over_budget == 0,
         fmt::format("{} of {} runs over budget; worst {:.0f}% ({})", kind.over_budget, kind.runs,
                     100.0 * kind.worst_utilisation, kind.worst_brick)});
  }
  return facts;
}

void run(const RunOptions& o) {
  const std::vector<std::string> outputs = {o.trace_path,  o.profile_json_path, o.prometheus_path,
                                            o.graph.path,  o.report_path,       o.model_trace_path};
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    for (std::size_t j = i + 1; j < outputs.size(); ++j) {
      if (!outputs[i].empty() && outputs[i] == outputs[j]) {
        throw InvalidArgument(
            fmt::format("two exports would write {}: give each its own file", outputs[i]));
      }
    }
  }
  for (const auto& [path, flag] :
       {std::pair{o.trace_path, "--trace"}, std::pair{o.profile_json_path, "--profile-json"},
        std::pair{o.prometheus_path, "--prometheus"}, std::pair{o.report_path, "--report"},
        std::pair{o.model_trace_path, "--trace-model"}}) {
    require_writable(path, flag);
  }
  o.graph.check();
  const Backend backend = *parse_backend(o.backend);
  const std::size_t threads = thread_count(o.threads);
  const std::filesystem::path path =
      o.model.empty() ? default_model(threads) : std::filesystem::path(o.model);
  o.sampling.validate();

  const auto load_start = std::chrono::steady_clock::now();
  const model::LlamaModel model = model::LlamaModel::open(path);
  const model::LlamaConfig& config = model.config();
  model::LlamaOptions options;
  options.backend = backend;
  options.policy.checks = parse_checks(o.checks);
  options.kv_type = o.kv_type == "f32" ? KvType::F32 : KvType::F16;
  options.n_ctx = o.ctx > 0 ? o.ctx : std::min(config.n_ctx_train, kDefaultContextCap);
  options.bandwidth_budget = ByteBudget::from_gb_per_second(o.budget_gb_per_second);
  options.repack = o.repack;
  options.on_repacked = [&model](const quant::WeightMatrix& source) { model.release(source); };
  require_memory(model, options.n_ctx, options.kv_type);
  ThreadPool pool(threads);
  model::LlamaDecoder decoder(config, model.weights(), pool, options);
  const double load_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - load_start)
          .count();

  const model::Tokenizer tokenizer(model.vocab());
  if (o.prompt_tokens.empty() && o.prompt.empty()) {
    throw InvalidArgument("the prompt is empty: give --prompt TEXT or --prompt-tokens IDS");
  }
  const std::vector<model::TokenId> prompt = o.prompt_tokens.empty()
                                                 ? tokenizer.encode(o.prompt)
                                                 : parse_ids(o.prompt_tokens, "--prompt-tokens");
  if (prompt.empty())
    throw InvalidArgument("the prompt is empty: give --prompt TEXT or --prompt-tokens IDS");
  model::GenerationParams params;
  params.n_predict = o.n_predict;
  params.sampling = o.sampling;
  params.force = parse_ids(o.force_tokens, "--force-tokens");
  params.top_logits = o.top_logits;
  params.stop_token = model.vocab().special().eos;

  ProfilerOptions profiler_options;
  profiler_options.sync_mode = *parse_sync_mode(o.sync);
  profiler_options.enabled = o.profile;
  profiler_options.trace_capacity_per_thread = o.trace_path.empty() ? 0 : o.trace_events;
  BrickProfiler profiler(profiler_options);
  profiler.set_thread_name("decoder");
  ProfilingObserver profiling(profiler);
  RunMonitor monitor(profiling, profiler);
  graph::GraphRecorder graph;
  const bool record_graph = o.graph.wanted() || !o.report_path.empty();
  if (record_graph) profiler.enable_graph(graph);

  std::optional<trace::ModelTracer> tracer;
  if (!o.model_trace_path.empty()) {
    trace::TraceConfig trace_config;
    trace_config.level = *trace::parse_trace_level(o.trace_level);
    trace_config.sample_every = o.trace_sample_every;
    trace_config.quant_error_every = o.trace_quant_every;
    trace_config.logit_lens_every = o.trace_lens_every;
    tracer.emplace(trace_config);
    tracer->open_stream(o.model_trace_path);
    decoder.set_tracer(&*tracer);
  }

  model::Generator generator(decoder, params, options.policy);
  generator.validate(prompt);
  if (!o.json) {
    fmt::print(stderr,
               "brick run: {} (llama, {} layers, embd {}, {} heads / {} kv, ffn {}, vocab {}; {}, "
               "{:.1f} MB of "
               "weights)\n",
               model.name(), config.n_layer, config.n_embd, config.n_head, config.n_head_kv,
               config.n_ff, config.n_vocab,
               model.file_type() ? model::name(*model.file_type()) : "mixed types",
               model.weights().bytes() / 1e6);
    fmt::print(stderr, "backend {}, {} threads, context {} ({} KV), {} bricks per token, checks {}\n",
               name(decoder.backend()), pool.size(), options.n_ctx, o.kv_type,
               decoder.brick_count(), o.checks);
    if (decoder.repacked_matrices() > 0) {
      fmt::print(stderr, "repacked {} matrices for the {} kernels ({:.1f} MB, in place of the file's)\n",
                 decoder.repacked_matrices(), name(decoder.backend()), decoder.repacked_bytes() / 1e6);
    }
    fmt::print(stderr, "\n");
    fmt::print("{}", o.prompt_tokens.empty() ? o.prompt : tokenizer.decode(prompt));
    std::fflush(stdout);
  }
  std::string text;
  const auto on_token = [&](model::TokenId id) {
    const std::string piece = tokenizer.piece(id);
    text += piece;
    if (!o.json) {
      fmt::print("{}", piece);
      std::fflush(stdout);
    }
  };
  const auto generation = generator.run(prompt, on_token, &monitor);
  profiler.add_tokens(decoder.n_past());
  // The trace of a run that failed is kept too: it may say where it went wrong.
  if (tracer) {
    decoder.set_tracer(nullptr);
    tracer->close_stream();
  }
  if (!generation) {
    fmt::print(stderr, "\nbrick run: {}\n", message(generation.error()));
    if (tracer) fmt::print(stderr, "{}", model_trace_line(o, *tracer));
    set_exit_code(2);
    return;
  }
  const VerifySummary verified = summarize(generator.verify());
  const Run finished{model,   decoder, *generation, verified,    profiler,
                     monitor, text,    load_ms,     pool.size(), tracer ? &*tracer : nullptr};
  if (o.json) {
    print_json(o, finished);
  } else {
    print_report(o, finished);
  }
  if (!o.trace_path.empty()) profiler.write_chrome_trace(o.trace_path);
  if (!o.profile_json_path.empty() || !o.report_path.empty()) {
    const std::string profile =
        report::to_profile_json(profiler, run_facts(o, finished, record_graph ? &graph : nullptr, pool));
    if (!o.profile_json_path.empty()) write_file_atomically(o.profile_json_path, profile);
    // From the JSON, so that the page shows exactly what the file holds.
    if (!o.report_path.empty()) report::write_html_report(o.report_path, report::parse_report_input(profile, "the run's profile"));
  }
  if (!o.prometheus_path.empty()) profiler.write_prometheus(o.prometheus_path);
  if (o.graph.wanted()) o.graph.write(graph.graph(), pool, o.json);
  if (verified.failed > 0 || monitor.assertions_failed() > 0) set_exit_code(2);
}

}  // namespace

void add_run_command(CLI::App& app, Action& chosen) {
  auto o = std::make_shared<RunOptions>();
  auto* cmd = app.add_subcommand("run",
                                 "Generate text with a llama GGUF (default: a synthetic model) on "
                                 "bricks, profiled and verified");
  cmd->add_option("model", o->model,
                  "A llama GGUF file (default: the small synthetic model, made on first use)")
      ->check(CLI::ExistingFile);
  cmd->add_option("-n,--n-predict", o->n_predict,
                  "Tokens to generate (0: evaluate the prompt only)")
      ->capture_default_str()
      ->transform(whole_number(0, 1000000));
  cmd->add_option("-p,--prompt", o->prompt, "The prompt text")->capture_default_str();
  cmd->add_option("--prompt-tokens", o->prompt_tokens,
                  "The prompt as token ids (1,15,27), instead of text");
  cmd->add_option("--force-tokens", o->force_tokens,
                  "Feed these ids instead of the sampled ones (teacher forcing); steps still "
                  "report predictions");
  cmd->add_option("--top-logits", o->top_logits,
                  "Report the K highest logits of every step (--json: steps)")
      ->transform(whole_number(0, 1000000));
  cmd->add_option("-t,--threads", o->threads,
                  "Threads (default: the physical cores; clamped to the usable CPUs)")
      ->transform(whole_number(0, 1 << 16));
  cmd->add_option("-c,--ctx", o->ctx, "Context positions (default: the model's, at most 4096)")
      ->transform(whole_number(0, 1 << 24));
  cmd->add_option("--temp", o->sampling.temperature, "Temperature; 0 is greedy")
      ->capture_default_str()
      ->check(decimal_number(0, 100));
  cmd->add_option("--top-k", o->sampling.top_k, "Top-k (0: off)")
      ->capture_default_str()
      ->transform(whole_number(0, 1000000000));
  cmd->add_option("--top-p", o->sampling.top_p, "Top-p (1: off)")
      ->capture_default_str()
      ->check(decimal_number(0, 1));
  cmd->add_option("--min-p", o->sampling.min_p, "Min-p (0: off)")
      ->capture_default_str()
      ->check(decimal_number(0, 1));
  cmd->add_option("--repeat-penalty", o->sampling.repeat_penalty, "Repetition penalty (1: off)")
      ->capture_default_str()
      ->check(decimal_number(0, 100));
  cmd->add_option("--repeat-last-n", o->sampling.repeat_last_n, "Tokens the penalty looks back on")
      ->capture_default_str()
      ->transform(whole_number(0, 1000000000));
  cmd->add_option("--seed", o->sampling.seed, "Sampling seed")
      ->capture_default_str()
      ->transform(whole_number(0, UINT64_MAX));
  cmd->add_option("--kv-type", o->kv_type, "KV cache cells: f16 (as llama.cpp) or f32")
      ->capture_default_str()
      ->transform(lower_case)
      ->check(CLI::IsMember({"f16", "f32"}));
  cmd->add_option("-b,--backend", o->backend, "auto, scalar, avx2 or avx512")
      ->capture_default_str()
      ->transform(lower_case)
      ->check(CLI::IsMember({"auto", "scalar", "avx2", "avx512"}));
  cmd->add_option("--budget-gbps", o->budget_gb_per_second,
                  "Each brick's budget: the time its bytes take at this bandwidth")
      ->capture_default_str()
      ->check(decimal_number(0.001, 100000));
  cmd->add_option("--checks", o->checks,
                  "Assertions on every call: cheap (finite, bounds), all (also equivalence), none; "
                  "every brick is verified on its last call after the run either way")
      ->capture_default_str()
      ->transform(lower_case)
      ->check(CLI::IsMember({"cheap", "all", "none"}));
  cmd->add_flag("--json", o->json, "Machine-readable output");
  cmd->add_option("--sync", o->sync,
                  "Profiler sync: eager (exact per brick) or deferred (resolved per layer)")
      ->capture_default_str()
      ->transform(lower_case)
      ->check(CLI::IsMember({"eager", "deferred"}));
  cmd->add_flag("!--no-profile", o->profile, "Run with the profiler disabled");
  cmd->add_flag("!--no-repack", o->repack,
                "Keep every weight matrix in the file's layout (by default the AVX2 backend repacks the "
                "k-quant ones for its kernels)");
  cmd->add_option("--trace", o->trace_path,
                  "Write a Chrome trace (ui.perfetto.dev, chrome://tracing) to this file");
  cmd->add_option("--trace-events", o->trace_events,
                  "Trace events kept; later ones are counted as dropped")
      ->capture_default_str()
      ->transform(whole_number(0, 1 << 30));
  cmd->add_option("--profile-json", o->profile_json_path,
                  "Write the profile as JSON, with per-layer times, peaks and verdicts (brick report reads it)");
  cmd->add_option("--report", o->report_path,
                  "Write the profile as one self-contained HTML page (charts, roofline, timeline, verdicts)");
  cmd->add_option("--prometheus", o->prometheus_path,
                  "Write the profile in Prometheus text format");
  cmd->add_option("--trace-model", o->model_trace_path,
                  "Trace the model to this JSON Lines file: tensor stats and activations per layer "
                  "with anomaly detection, and at full level attention, logits, the logit lens, "
                  "quantization error and the KV cache (brick trace-summary reads it)");
  cmd->add_option("--trace-level", o->trace_level, "Model trace level: lightweight or full")
      ->capture_default_str()
      ->transform(lower_case)
      ->check(CLI::IsMember({"lightweight", "full"}));
  cmd->add_option("--trace-sample-every", o->trace_sample_every,
                  "Keep the model trace's records of every Nth forward (anomalies are checked on all)")
      ->capture_default_str()
      ->transform(whole_number(1, 1000000000));
  cmd->add_option("--trace-quant-every", o->trace_quant_every,
                  "Full level: measure the quantization error of one layer's projections (the next in "
                  "turn) on every Nth forward")
      ->capture_default_str()
      ->transform(whole_number(1, 1000000000));
  cmd->add_option("--trace-lens-every", o->trace_lens_every,
                  "Full level: compute the logit lens (the LM head on every layer) on every Nth forward")
      ->capture_default_str()
      ->transform(whole_number(1, 1000000000));
  cmd->add_option("--graph", o->graph.path, "Write the execution graph (FILE.dot: Graphviz, FILE.json)");
  cmd->add_flag("--critical-path", o->graph.critical_path,
                "Print the critical path of the run with slack and roofline classes");
  cmd->callback([o, &chosen] { chosen = [o] { run(*o); }; });
}

}  // namespace brick::cli
