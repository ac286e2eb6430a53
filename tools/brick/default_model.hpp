#pragma once
// The model `brick run` uses when given none: the gen-model "small" preset, generated on first use
// into the user's cache folder ($XDG_CACHE_HOME/brick, else ~/.cache/brick) and reused afterwards.
#include <filesystem>

namespace brick::cli {

// Brick's cache folder: $XDG_CACHE_HOME/brick, else ~/.cache/brick (not created here). IoError when
// neither variable is set to an absolute path.
std::filesystem::path cache_folder();

// The default model's path, generating it first (with a progress bar) when it is not there yet.
// IoError when no cache folder can be found or created.
std::filesystem::path default_model(std::size_t threads);

}  // namespace brick::cli
