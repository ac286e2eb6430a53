#pragma once
// llama.cpp's own llama_model_quantize (libllama from the oracle folder, dlopen'ed), for tests that
// check `brick quantize` against llama-quantize file for file.
#include <filesystem>

namespace brick::test {

// Quantizes `in` (an F32 or F16 llama GGUF) to `out` as llama-quantize does for llama_ftype `ftype`
// (15 = Q4_K_M, 17 = Q5_K_M, ...), with its default parameters on one thread. Throws
// brick::IoError when libllama cannot be loaded (run ./scripts/setup), std::runtime_error when
// llama.cpp fails.
void llama_quantize(const std::filesystem::path& in, const std::filesystem::path& out, int ftype);

}  // namespace brick::test
