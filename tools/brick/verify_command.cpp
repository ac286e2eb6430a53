// brick verify: runs a model on every backend this machine has, teacher-forced on the tokens of a
// Scalar reference run (or of a saved run), with a checksum of every brick output at every token,
// and names the first kernel, layer and token at which a backend leaves the reference. The exit
// status is 2 when anything diverged.
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "brick/core/error.hpp"
#include "brick/graph/checksum_file.hpp"
#include "brick/graph/divergence.hpp"
#include "brick/graph/kernel_fault.hpp"
#include "brick/model/checksum_run.hpp"
#include "brick/model/llama_model.hpp"
#include "brick/model/tokenizer.hpp"
#include "commands.hpp"
#include "default_model.hpp"

namespace brick::cli {
namespace {

struct VerifyOptions {
  std::string model;
  std::size_t n_predict = 8;
  std::string prompt = "Once upon a time";
  std::string save_path;
  std::string against_path;
  std::string mode = "tolerance";
  double tolerance = graph::kDefaultTolerance;
  std::size_t threads = 0;
  bool json = false;
  std::vector<std::string> faults;
};

struct Comparison {
  std::string candidate;
  std::string reference;
  graph::DivergenceReport report;
};

// The run of the file to compare a backend with: the same backend's, else the Scalar one's, else
// the first.
const graph::ChecksumRun& reference_for(const graph::ChecksumFile& file, std::string_view backend) {
  if (const graph::ChecksumRun* same = file.find(backend)) return *same;
  if (const graph::ChecksumRun* scalar = file.find(name(Backend::Scalar))) return *scalar;
  return file.runs.front();
}

void print_text(const VerifyOptions& o, const model::LlamaModel& model, const graph::ChecksumFile& runs,
                const std::vector<Comparison>& comparisons) {
  fmt::print("brick verify: {} ({} layers), {} prompt tokens and {} generated, {} mode\n", model.name(),
             model.config().n_layer, runs.prompt.size(), runs.tokens.size(), o.mode);
  if (!o.against_path.empty()) fmt::print("against {} ({} runs)\n", o.against_path, comparisons.size());
  if (comparisons.empty()) fmt::print("only the Scalar backend runs on this CPU: there is nothing to compare\n");
  for (const Comparison& c : comparisons) fmt::print("{} against {}: {}", c.candidate, c.reference, c.report.to_text());
}

void print_json(const model::LlamaModel& model, const graph::ChecksumFile& runs, const std::vector<Comparison>& comparisons) {
  nlohmann::json list = nlohmann::json::array();
  bool diverged = false;
  for (const Comparison& c : comparisons) {
    list.push_back({{"candidate", c.candidate}, {"reference", c.reference}, {"report", nlohmann::json::parse(c.report.to_json())}});
    diverged = diverged || c.report.diverged();
  }
  const nlohmann::json out = {{"model", model.name()}, {"prompt", runs.prompt}, {"tokens", runs.tokens},
                              {"comparisons", list}, {"diverged", diverged}};
  fmt::print("{}\n", out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
}

void verify(const VerifyOptions& o) {
  require_writable(o.save_path, "--save-checksums");
  if (!o.save_path.empty() && o.save_path == o.against_path) {
    throw InvalidArgument(fmt::format("--save-checksums and --against both name {}: give the new run its own file", o.save_path));
  }
  const graph::CompareMode mode = *graph::parse_compare_mode(o.mode);
  std::vector<graph::KernelFault> faults;
  for (const std::string& text : o.faults) faults.push_back(graph::parse_kernel_fault(text));
  // A saved run is read whole, and checked, before anything runs.
  const std::optional<graph::ChecksumFile> saved =
      o.against_path.empty() ? std::nullopt : std::optional(graph::load_checksums(o.against_path));
  if (saved && saved->runs.empty()) throw FormatError(fmt::format("{}: the file holds no runs", o.against_path));

  const std::size_t threads = thread_count(o.threads);
  const model::LlamaModel model =
      model::LlamaModel::open(o.model.empty() ? default_model(threads) : std::filesystem::path(o.model));
  if (saved && saved->model != model.name()) {
    throw InvalidArgument(fmt::format("{} holds runs of {}; this model is {}", o.against_path, saved->model, model.name()));
  }
  ThreadPool pool(threads);
  graph::ChecksumFile runs;
  runs.model = model.name();
  const auto run = [&](Backend backend, const std::vector<model::TokenId>& force) {
    model::ChecksumRunParams params;
    params.prompt = runs.prompt;
    params.n_predict = saved ? saved->tokens.size() : o.n_predict;
    params.force = force;
    params.backend = backend;
    params.faults = faults;
    return model::run_with_checksums(model, pool, params);
  };

  std::vector<Comparison> comparisons;
  if (saved) {
    runs.prompt = saved->prompt;
    runs.tokens = saved->tokens;
  } else {
    runs.prompt = model::Tokenizer(model.vocab()).encode(o.prompt);
    if (runs.prompt.empty()) throw InvalidArgument("--prompt: the prompt is empty");
    model::ChecksumRun reference = run(Backend::Scalar, {});
    runs.tokens = reference.tokens;
    runs.runs.push_back({std::string(name(Backend::Scalar)), std::move(reference.log)});
  }
  for (const Backend backend : kConcreteBackends) {
    if (!is_supported(backend) || (!saved && backend == Backend::Scalar)) continue;
    model::ChecksumRun candidate = run(backend, runs.tokens);
    const graph::ChecksumRun& reference = saved ? reference_for(*saved, name(backend)) : runs.runs.front();
    comparisons.push_back({std::string(name(backend)), saved ? fmt::format("{} of {}", reference.name, o.against_path) : reference.name,
                           graph::find_divergence(reference.log, candidate.log, mode, o.tolerance)});
    runs.runs.push_back({std::string(name(backend)), std::move(candidate.log)});
  }
  if (o.json) {
    print_json(model, runs, comparisons);
  } else {
    print_text(o, model, runs, comparisons);
  }
  if (!o.save_path.empty()) graph::save_checksums(o.save_path, runs);
  for (const Comparison& c : comparisons) {
    if (c.report.diverged()) set_exit_code(2);
  }
}

}  // namespace

void add_verify_command(CLI::App& app, Action& chosen) {
  auto o = std::make_shared<VerifyOptions>();
  auto* cmd = app.add_subcommand("verify",
                                 "Run a llama GGUF (default: the synthetic model) on every backend against Scalar, "
                                 "teacher-forced, and name the first kernel that diverges");
  cmd->add_option("model", o->model, "A llama GGUF file (default: the small synthetic model, made on first use)")
      ->check(CLI::ExistingFile);
  cmd->add_option("-n,--n-predict", o->n_predict, "Tokens to generate after the prompt")
      ->capture_default_str()
      ->transform(whole_number(1, 100000));
  cmd->add_option("-p,--prompt", o->prompt, "The prompt text")->capture_default_str();
  cmd->add_option("--save-checksums", o->save_path, "Write every backend's checksums to this file (JSON)");
  cmd->add_option("--against", o->against_path,
                  "Compare with the runs saved in this file (another machine, compiler or version), on its tokens")
      ->check(CLI::ExistingFile);
  cmd->add_option("--mode", o->mode, "exact (the bits of every output) or tolerance (its sums, within --tolerance)")
      ->capture_default_str()
      ->transform(lower_case)
      ->check(CLI::IsMember({"exact", "tolerance"}));
  cmd->add_option("--tolerance", o->tolerance, "Relative difference of the sums that tolerance mode accepts")
      ->capture_default_str()
      ->check(decimal_number(0, 1000));
  cmd->add_option("-t,--threads", o->threads, "Threads (default: the physical cores; clamped to the usable CPUs)")
      ->transform(whole_number(0, 1 << 16));
  cmd->add_flag("--json", o->json, "Machine-readable output");
  // For tests of the command itself: makes one kernel of one backend wrong at one (layer, token).
  cmd->add_option("--inject-fault", o->faults, "KERNEL,LAYER,TOKEN[,BACKEND]")->group("");
  cmd->callback([o, &chosen] { chosen = [o] { verify(*o); }; });
}

}  // namespace brick::cli
