#include "brick/model/file_type.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <utility>

namespace brick::model {
namespace {

using quant::TensorType;

constexpr std::array<std::pair<FileType, std::string_view>, 7> kNames = {{
    {FileType::F32, "f32"},
    {FileType::F16, "f16"},
    {FileType::Q8_0, "q8_0"},
    {FileType::Q4_K_M, "q4_k_m"},
    {FileType::Q5_K_M, "q5_k_m"},
    {FileType::Q6_K, "q6_k"},
    {FileType::BF16, "bf16"},
}};

TensorType base_type(FileType type) noexcept {
  switch (type) {
    case FileType::F32: return TensorType::F32;
    case FileType::F16: return TensorType::F16;
    case FileType::Q8_0: return TensorType::Q8_0;
    case FileType::Q4_K_M: return TensorType::Q4_K;
    case FileType::Q5_K_M: return TensorType::Q5_K;
    case FileType::Q6_K: return TensorType::Q6_K;
    case FileType::BF16: return TensorType::BF16;
  }
  return TensorType::F32;
}

// llama.cpp's use_more_bits: the first and last eighth of the blocks, and every third between.
bool use_more_bits(std::size_t layer, std::size_t n_layer) noexcept {
  const auto i = static_cast<long long>(layer);
  const auto n = static_cast<long long>(n_layer);
  return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2;
}

// N of "blk.N.", if the name has one.
std::optional<std::size_t> block_of(std::string_view name) noexcept {
  if (!name.starts_with("blk.")) return std::nullopt;
  std::size_t layer = 0;
  const char* first = name.data() + 4;
  const auto [end, error] = std::from_chars(first, name.data() + name.size(), layer);
  if (error != std::errc() || end == first || *end != '.') return std::nullopt;
  return layer;
}

}  // namespace

std::string_view name(FileType type) noexcept {
  for (const auto& [t, text] : kNames) {
    if (t == type) return text;
  }
  return "unknown";
}

std::optional<FileType> parse_file_type(std::string_view text) noexcept {
  for (const auto& [type, spelled] : kNames) {
    if (spelled.size() == text.size() &&
        std::equal(text.begin(), text.end(), spelled.begin(),
                   [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; })) {
      return type;
    }
  }
  return std::nullopt;
}

std::optional<FileType> file_type_from_id(std::uint32_t id) noexcept {
  for (const auto& [type, text] : kNames) {
    if (static_cast<std::uint32_t>(type) == id) return type;
  }
  return std::nullopt;
}

TensorType llama_tensor_type(FileType file_type, std::string_view name, std::size_t n_dims, std::size_t n_layer,
                             bool has_output) {
  if (n_dims < 2) return TensorType::F32;
  const TensorType base = base_type(file_type);
  const bool mix = file_type == FileType::Q4_K_M || file_type == FileType::Q5_K_M;
  if (file_type == FileType::F32 || file_type == FileType::F16 || file_type == FileType::BF16) return base;
  const bool is_output = name == "output.weight" || (!has_output && name == "token_embd.weight");
  if (is_output) return base == TensorType::Q8_0 ? TensorType::Q8_0 : TensorType::Q6_K;
  if (mix && (name.ends_with("attn_v.weight") || name.ends_with("ffn_down.weight"))) {
    if (const auto layer = block_of(name); layer && use_more_bits(*layer, n_layer)) return TensorType::Q6_K;
  }
  return base;
}

}  // namespace brick::model
