#include "default_model.hpp"

#include <fmt/format.h>
#include <fmt/std.h>

#include <cstdlib>

#include "brick/core/error.hpp"
#include "brick/model/synthetic_model.hpp"
#include "progress_bar.hpp"

namespace brick::cli {

std::filesystem::path cache_folder() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg == '/') {
    return std::filesystem::path(xdg) / "brick";
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home == '/') {
    return std::filesystem::path(home) / ".cache" / "brick";
  }
  throw IoError(
      "no cache folder (for the default model and the machine's peaks): set XDG_CACHE_HOME or HOME");
}

std::filesystem::path default_model(std::size_t threads) {
  const model::SyntheticModelSpec spec = model::SyntheticModelSpec::preset("small");
  const std::filesystem::path folder = cache_folder();
  const std::filesystem::path path = folder / (spec.name() + ".gguf");
  if (std::filesystem::exists(path)) return path;
  std::error_code error;
  std::filesystem::create_directories(folder, error);
  if (error)
    throw IoError(fmt::format("cannot create the cache folder {}: {}", folder, error.message()));
  fmt::print(stderr, "brick: generating the default model {} (once; gen-model --preset small)\n",
             path);
  ThreadPool pool(threads);
  ProgressBar bar("gen-model");
  model::write_synthetic_model(
      spec, path, pool, [&](std::uint64_t done, std::uint64_t total) { bar.update(done, total); });
  return path;
}

}  // namespace brick::cli
