// brick gen-model: writes a synthetic llama GGUF (model/synthetic_model.hpp) that llama.cpp loads.
#include <fmt/format.h>
#include <fmt/std.h>

#include <optional>
#include <string>

#include "brick/core/error.hpp"
#include "brick/model/synthetic_model.hpp"
#include "brick/runtime/cpu_topology.hpp"
#include "commands.hpp"
#include "progress_bar.hpp"

namespace brick::cli {
namespace {

struct GenModelOptions {
  std::string out;
  std::string preset = "small";
  std::optional<std::size_t> layers, embd, heads, kv_heads, ffn, vocab, ctx;
  std::optional<std::string> type;
  bool tied = false;
  std::uint64_t seed = 42;
  std::size_t threads = 0;
};

void gen_model(const GenModelOptions& o) {
  model::SyntheticModelSpec spec = model::SyntheticModelSpec::preset(o.preset);
  const auto set = [](std::size_t& field, const std::optional<std::size_t>& value) {
    if (value) field = *value;
  };
  set(spec.n_layer, o.layers);
  set(spec.n_embd, o.embd);
  set(spec.n_head, o.heads);
  set(spec.n_head_kv, o.kv_heads);
  set(spec.n_ff, o.ffn);
  set(spec.n_vocab, o.vocab);
  set(spec.n_ctx, o.ctx);
  if (o.type) spec.type = parse_file_type_option(*o.type);
  spec.tied = o.tied;
  spec.seed = o.seed;
  spec.validate();
  ThreadPool pool(thread_count(o.threads));
  ProgressBar bar(fmt::format("gen-model {}", o.out));
  model::write_synthetic_model(
      spec, o.out, pool, [&](std::uint64_t done, std::uint64_t total) { bar.update(done, total); });
  bar.finish();
  fmt::print(
      "wrote {}: {} ({} layers, embd {}, {} heads / {} kv, ffn {}, vocab {}, context {}; {:.1f} M "
      "parameters, {:.1f} MB)\n",
      o.out, spec.name(), spec.n_layer, spec.n_embd, spec.n_head, spec.n_head_kv, spec.n_ff,
      spec.n_vocab, spec.n_ctx, static_cast<double>(spec.parameters()) / 1e6,
      static_cast<double>(std::filesystem::file_size(o.out)) / 1e6);
}

}  // namespace

void add_gen_model_command(CLI::App& app, Action& chosen) {
  auto o = std::make_shared<GenModelOptions>();
  auto* cmd = app.add_subcommand(
      "gen-model", "Write a synthetic llama model (GGUF) that llama.cpp loads and runs");
  cmd->add_option("out", o->out, "The GGUF file to write")->required();
  cmd->add_option("--preset", o->preset,
                  "tiny (tests), small (the default model), base (about 670 MB)")
      ->capture_default_str()
      ->transform(lower_case)
      ->check(CLI::IsMember({"tiny", "small", "base"}));
  cmd->add_option("--layers", o->layers, "Transformer blocks")->transform(whole_number(1, 4096));
  cmd->add_option("--embd", o->embd, "Embedding width")->transform(whole_number(1, 1 << 20));
  cmd->add_option("--heads", o->heads, "Attention heads")->transform(whole_number(1, 1 << 16));
  cmd->add_option("--kv-heads", o->kv_heads, "Key/value heads (GQA when below --heads)")
      ->transform(whole_number(1, 1 << 16));
  cmd->add_option("--ffn", o->ffn, "Feed-forward width")->transform(whole_number(1, 1 << 22));
  cmd->add_option("--vocab", o->vocab, "Vocabulary size")->transform(whole_number(1, 1u << 31));
  cmd->add_option("--ctx", o->ctx, "Context length (llama.context_length)")
      ->transform(whole_number(1, 1 << 24));
  cmd->add_option("--type", o->type,
                  "q4_k_m, q5_k_m, q6_k, q8_0, f16, bf16 or f32 (default q4_k_m)");
  cmd->add_flag("--tied", o->tied, "No output.weight: the output reuses token_embd");
  cmd->add_option("--seed", o->seed, "Seed of the weights and the vocabulary")
      ->transform(whole_number(0, UINT64_MAX))
      ->capture_default_str();
  cmd->add_option("-t,--threads", o->threads,
                  "Threads drawing the weights (default: the physical cores)")
      ->transform(whole_number(0, 1 << 16));
  cmd->callback([o, &chosen] { chosen = [o] { gen_model(*o); }; });
}

}  // namespace brick::cli
