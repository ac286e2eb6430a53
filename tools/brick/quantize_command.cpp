// brick quantize: re-types a llama GGUF the way llama-quantize does (model/quantize_model.hpp).
#include <fmt/format.h>

#include <string>

#include "brick/model/quantize_model.hpp"
#include "commands.hpp"
#include "progress_bar.hpp"

namespace brick::cli {
namespace {

struct QuantizeOptions {
  std::string in, out, type;
  std::size_t threads = 0;
};

void quantize(const QuantizeOptions& o) {
  const model::FileType type = parse_file_type_option(o.type);
  ThreadPool pool(thread_count(o.threads));
  ProgressBar bar(fmt::format("quantize {}", o.out));
  const model::QuantizeReport report = model::quantize_model(
      o.in, o.out, type, pool,
      [&](std::uint64_t done, std::uint64_t total) { bar.update(done, total); });
  bar.finish();
  fmt::print("wrote {} ({}): {} tensors, {} re-typed, {:.1f} MB -> {:.1f} MB\n", o.out,
             model::name(type), report.tensors, report.quantized,
             static_cast<double>(report.bytes_in) / 1e6,
             static_cast<double>(report.bytes_out) / 1e6);
}

}  // namespace

void add_quantize_command(CLI::App& app, Action& chosen) {
  auto o = std::make_shared<QuantizeOptions>();
  auto* cmd = app.add_subcommand(
      "quantize", "Re-type a llama GGUF as llama-quantize does (no importance matrix)");
  cmd->add_option("in", o->in, "The GGUF file to read")->required()->check(CLI::ExistingFile);
  cmd->add_option("out", o->out, "The GGUF file to write")->required();
  cmd->add_option("type", o->type, "q4_k_m, q5_k_m, q6_k, q8_0, f16, bf16 or f32")->required();
  cmd->add_option("-t,--threads", o->threads, "Threads (default: the physical cores)")
      ->transform(whole_number(0, 1 << 16));
  cmd->callback([o, &chosen] { chosen = [o] { quantize(*o); }; });
}

}  // namespace brick::cli
