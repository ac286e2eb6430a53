// Brick against llama.cpp on the same GGUF file, side by side: prompt processing and decode speed,
// peak resident memory, and decode as a fraction of the machine's read bandwidth.
//
//   brick_llama_cpp_bench [--model FILE] [--prompt 512] [--decode 64] [--threads 1,2]
//   [--repetitions 3]
//
// Without --model it uses the gen-model "base" preset (TinyLlama 1.1B's shape, Q4_K_M, about
// 670 MB of weights), written once into the build folder. Each repetition runs `brick run --json`
// and llama.cpp (node-llama-cpp through tests/e2e/llama_cpp_run.mjs: flash attention off, the
// prompt in one batch, greedy decoding) as child processes, alternating, with the same prompt ids;
// medians are printed as a markdown table. Speeds are each engine's own figures: Brick's timings
// and llama.cpp's llama_perf_context_print lines (node's own overhead per call is not in them).
// Peak memory is the child's ru_maxrss; node's share is measured by a run that loads llama.cpp's
// libraries and no model, and taken off.
#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "brick/core/cpu_features.hpp"
#include "brick/model/llama_model.hpp"
#include "brick/model/synthetic_model.hpp"
#include "brick/runtime/atomic_file.hpp"
#include "brick/runtime/cpu_topology.hpp"
#include "read_probe.hpp"
#include "support/llama_cpp.hpp"

extern char** environ;

namespace brick::bench {
namespace {

namespace fs = std::filesystem;

struct Options {
  std::string model;
  std::size_t prompt = 512;
  std::size_t decode = 64;
  std::vector<std::size_t> threads = {1, 2};
  int repetitions = 3;
};

struct Child {
  std::string out;
  int status = 0;
  double max_rss_mb = 0;
};

// Runs argv[0] with its arguments, returns its stdout, exit status and peak resident memory.
Child run_child(const std::vector<std::string>& argv) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) throw std::runtime_error("pipe failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  if (spawned != 0) {
    close(pipe_fds[0]);
    throw std::runtime_error(fmt::format("cannot start {}", argv[0]));
  }
  Child child;
  std::array<char, 65536> buffer{};
  ssize_t n = 0;
  while ((n = read(pipe_fds[0], buffer.data(), buffer.size())) > 0)
    child.out.append(buffer.data(), static_cast<std::size_t>(n));
  close(pipe_fds[0]);
  rusage usage{};
  wait4(pid, &child.status, 0, &usage);
  child.max_rss_mb = static_cast<double>(usage.ru_maxrss) / 1024.0;
  if (!WIFEXITED(child.status) || WEXITSTATUS(child.status) != 0) {
    throw std::runtime_error(fmt::format("{} failed (status {})", argv[0], child.status));
  }
  return child;
}

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

struct Sample {
  std::vector<double> prompt_tps, decode_tps, rss_mb;
  void add(double p, double d, double rss) {
    prompt_tps.push_back(p);
    decode_tps.push_back(d);
    rss_mb.push_back(rss);
  }
};

std::string ids(const std::vector<int>& tokens) {
  std::string out;
  for (int id : tokens) out += fmt::format("{}{}", out.empty() ? "" : ",", id);
  return out;
}

fs::path default_model() {
  const fs::path path = fs::path(BRICK_BENCH_DIR) / "base-q4_k_m.gguf";
  if (!fs::exists(path)) {
    fmt::print(stderr, "writing {} (gen-model --preset base)\n", path.string());
    ThreadPool pool(physical_cores());
    model::write_synthetic_model(model::SyntheticModelSpec::preset("base"), path, pool);
  }
  return path;
}

}  // namespace

int main(const Options& o) {
  const fs::path model_path = o.model.empty() ? default_model() : fs::path(o.model);
  // Mapped without faulting the weights in, and the read probes run after every child: a child
  // started by posix_spawn (vfork) starts from this process's peak resident memory in its
  // ru_maxrss, so this process must stay small until the children have run.
  const model::LlamaModel model(gguf::GgufFile::open(model_path));
  const double weight_bytes = model.weights().bytes();
  std::mt19937 rng(7);
  std::vector<int> prompt = {model.vocab().special().bos};
  while (prompt.size() < o.prompt)
    prompt.push_back(3 + static_cast<int>(rng() % (model.config().n_vocab - 3)));
  const std::size_t context = o.prompt + o.decode + 16;
  const fs::path brick = fs::read_symlink("/proc/self/exe").parent_path() / "brick";
  const fs::path script = fs::path(BRICK_SOURCE_DIR) / "tests" / "e2e" / "llama_cpp_run.mjs";
  const fs::path request = fs::temp_directory_path() / fmt::format("brick-bench-{}.json", getpid());

  const double node_mb = run_child({"node", script.string(), R"({"baseline": true})"}).max_rss_mb;
  fmt::print("machine: {} ({}), {}\n", cpu_features().brand, describe(cpu_features()),
             model.name());
  fmt::print(
      "model: {} ({:.0f} MB of weights), prompt {} tokens, decode {} tokens, {} repetitions\n\n",
      model_path.string(), weight_bytes / 1e6, o.prompt, o.decode, o.repetitions);

  fmt::print(
      "| threads | engine | prompt tok/s | decode tok/s | decode GB/s (of read probe) | peak RSS "
      "MB |\n");
  fmt::print("|---|---|---|---|---|---|\n");
  std::vector<std::pair<Sample, Sample>> samples(o.threads.size());
  for (std::size_t i = 0; i < o.threads.size(); ++i) {
    const std::size_t threads = o.threads[i];
    auto& [ours, theirs] = samples[i];
    for (int r = 0; r < o.repetitions; ++r) {
      const Child b =
          run_child({brick.string(), "run", model_path.string(), "--prompt-tokens", ids(prompt),
                     "-n", std::to_string(o.decode), "--threads", std::to_string(threads), "--ctx",
                     std::to_string(context), "--json"});
      const auto json = nlohmann::json::parse(b.out);
      ours.add(json["timings"]["prompt_tokens_per_s"].get<double>(),
               json["timings"]["decode_tokens_per_s"].get<double>(), b.max_rss_mb);
      write_file_atomically(request,
                            nlohmann::json{{"model", model_path.string()}, {"prompt", prompt},   {"n", o.decode},
                                           {"threads", threads},           {"context", context}, {"top", 1}}
                                .dump());
      const Child l = run_child({"node", script.string(), "@" + request.string()});
      test::LlamaCppRun run;
      run.raw = nlohmann::json::parse(
          l.out.substr(l.out.rfind("\n{") == std::string::npos ? 0 : l.out.rfind("\n{") + 1));
      run.perf = run.raw.at("perf").get<std::vector<std::string>>();
      theirs.add(test::llama_cpp_tokens_per_second(run, "prompt eval"),
                 test::llama_cpp_tokens_per_second(run, "eval"), l.max_rss_mb - node_mb);
    }
  }
  for (std::size_t i = 0; i < o.threads.size(); ++i) {
    const std::size_t threads = o.threads[i];
    const auto& [ours, theirs] = samples[i];
    ThreadPool pool(threads);
    const double probe = ReadProbe().gb_per_second(pool);
    const auto row = [&](const char* engine, const Sample& s) {
      const double decode = median(s.decode_tps);
      const double gbps = decode * weight_bytes / 1e9;
      fmt::print("| {} | {} | {:.1f} | {:.2f} | {:.1f} ({:.0f}% of {:.1f}) | {:.0f} |\n", threads,
                 engine, median(s.prompt_tps), decode, gbps, 100.0 * gbps / probe, probe,
                 median(s.rss_mb));
    };
    row("brick", ours);
    row("llama.cpp", theirs);
    fmt::print("| {} | brick / llama.cpp | {:.2f}x | {:.2f}x | | {:.2f}x |\n", threads,
               median(ours.prompt_tps) / median(theirs.prompt_tps),
               median(ours.decode_tps) / median(theirs.decode_tps),
               median(ours.rss_mb) / median(theirs.rss_mb));
  }
  fs::remove(request);
  return 0;
}

}  // namespace brick::bench

int main(int argc, char** argv) {
  const auto usage = [&] {
    fmt::print(stderr,
               "usage: {} [--model FILE] [--prompt N] [--decode N] [--threads 1,2] [--repetitions N]\n",
               argv[0]);
    return 2;
  };
  brick::bench::Options o;
  try {
    for (int i = 1; i < argc; i += 2) {
      const std::string flag = argv[i];
      if (i + 1 == argc) return usage();  // --help, or a flag without its value
      const std::string value = argv[i + 1];
      if (flag == "--model") {
        o.model = value;
      } else if (flag == "--prompt") {
        o.prompt = std::stoul(value);
      } else if (flag == "--decode") {
        o.decode = std::stoul(value);
      } else if (flag == "--repetitions") {
        o.repetitions = std::stoi(value);
      } else if (flag == "--threads") {
        o.threads.clear();
        std::size_t start = 0;
        while (start < value.size()) {
          const std::size_t comma = value.find(',', start);
          o.threads.push_back(std::stoul(value.substr(start, comma - start)));
          start = comma == std::string::npos ? value.size() : comma + 1;
        }
      } else {
        return usage();
      }
    }
  } catch (const std::logic_error&) {  // std::stoul and std::stoi: not a number, or out of range
    return usage();
  }
  if (o.prompt == 0 || o.decode == 0 || o.repetitions <= 0 || o.threads.empty()) return usage();
  try {
    return brick::bench::main(o);
  } catch (const std::exception& e) {
    fmt::print(stderr, "brick_llama_cpp_bench: {}\n", e.what());
    return 1;
  }
}
