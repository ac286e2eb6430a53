#include "brick/quant/tensor_type.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>

#include "quant/dot_kernel_table.hpp"

namespace brick::quant {
namespace {

constexpr std::array kTypes = {
    TensorTypeTraits{TensorType::F32, "f32", 1, 4},          TensorTypeTraits{TensorType::F16, "f16", 1, 2},
    TensorTypeTraits{TensorType::Q4_0, "q4_0", 32, 18},      TensorTypeTraits{TensorType::Q4_1, "q4_1", 32, 20},
    TensorTypeTraits{TensorType::Q5_0, "q5_0", 32, 22},      TensorTypeTraits{TensorType::Q5_1, "q5_1", 32, 24},
    TensorTypeTraits{TensorType::Q8_0, "q8_0", 32, 34},      TensorTypeTraits{TensorType::Q8_1, "q8_1", 32, 36},
    TensorTypeTraits{TensorType::Q2_K, "q2_K", 256, 84},     TensorTypeTraits{TensorType::Q3_K, "q3_K", 256, 110},
    TensorTypeTraits{TensorType::Q4_K, "q4_K", 256, 144},    TensorTypeTraits{TensorType::Q5_K, "q5_K", 256, 176},
    TensorTypeTraits{TensorType::Q6_K, "q6_K", 256, 210},    TensorTypeTraits{TensorType::Q8_K, "q8_K", 256, 292},
    TensorTypeTraits{TensorType::IQ2_XXS, "iq2_xxs", 256, 66}, TensorTypeTraits{TensorType::IQ2_XS, "iq2_xs", 256, 74},
    TensorTypeTraits{TensorType::IQ3_XXS, "iq3_xxs", 256, 98}, TensorTypeTraits{TensorType::IQ1_S, "iq1_s", 256, 50},
    TensorTypeTraits{TensorType::IQ4_NL, "iq4_nl", 32, 18},  TensorTypeTraits{TensorType::IQ3_S, "iq3_s", 256, 110},
    TensorTypeTraits{TensorType::IQ2_S, "iq2_s", 256, 82},   TensorTypeTraits{TensorType::IQ4_XS, "iq4_xs", 256, 136},
    TensorTypeTraits{TensorType::I8, "i8", 1, 1},            TensorTypeTraits{TensorType::I16, "i16", 1, 2},
    TensorTypeTraits{TensorType::I32, "i32", 1, 4},          TensorTypeTraits{TensorType::I64, "i64", 1, 8},
    TensorTypeTraits{TensorType::F64, "f64", 1, 8},          TensorTypeTraits{TensorType::IQ1_M, "iq1_m", 256, 56},
    TensorTypeTraits{TensorType::BF16, "bf16", 1, 2},        TensorTypeTraits{TensorType::TQ1_0, "tq1_0", 256, 54},
    TensorTypeTraits{TensorType::TQ2_0, "tq2_0", 256, 66},   TensorTypeTraits{TensorType::MXFP4, "mxfp4", 32, 17},
    TensorTypeTraits{TensorType::NVFP4, "nvfp4", 64, 36},    TensorTypeTraits{TensorType::Q1_0, "q1_0", 128, 18},
    TensorTypeTraits{TensorType::Q2_0, "q2_0", 64, 18},
};

bool equal_ignoring_case(std::string_view a, std::string_view b) noexcept {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

std::optional<TensorTypeTraits> tensor_type_traits(std::uint32_t id) noexcept {
  const auto it = std::find_if(kTypes.begin(), kTypes.end(),
                               [id](const TensorTypeTraits& t) { return static_cast<std::uint32_t>(t.type) == id; });
  if (it == kTypes.end()) return std::nullopt;
  return *it;
}

const TensorTypeTraits& traits(TensorType type) noexcept {
  const auto it =
      std::find_if(kTypes.begin(), kTypes.end(), [type](const TensorTypeTraits& t) { return t.type == type; });
  return it != kTypes.end() ? *it : kTypes.front();
}

std::optional<TensorType> parse_tensor_type(std::string_view name) noexcept {
  for (const TensorTypeTraits& t : kTypes) {
    if (equal_ignoring_case(t.name, name)) return t.type;
  }
  return std::nullopt;
}

std::optional<std::size_t> row_bytes(TensorType type, std::size_t values) noexcept {
  const TensorTypeTraits& t = traits(type);
  const std::size_t blocks = values / t.block_values;
  if (values % t.block_values != 0 || blocks > SIZE_MAX / t.block_bytes) return std::nullopt;
  return blocks * t.block_bytes;
}

bool is_computable(TensorType type) noexcept {
  return detail::with_format(type, [](auto) {});
}

}  // namespace brick::quant
