#pragma once
// The one argument of a seed program: the folder its seed files go into, made when missing.
#include <cstdio>
#include <filesystem>
#include <optional>

namespace brick::fuzz {

// The folder, or nullopt (after a usage line on stderr) when the arguments are not one folder.
inline std::optional<std::filesystem::path> seed_folder(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s FOLDER\n", argv[0]);
    return std::nullopt;
  }
  std::filesystem::path folder = argv[1];
  std::filesystem::create_directories(folder);
  return folder;
}

}  // namespace brick::fuzz
