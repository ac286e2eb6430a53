// The instruction sets of the dot kernels and the public dot products, all through the kernel
// table; the kernels themselves live in quant/kernels/, each compiled for its own instruction set.
// This file is baseline x86-64 code.
#include <fmt/format.h>

#include <type_traits>

#include "brick/core/error.hpp"
#include "brick/quant/bf16.hpp"
#include "brick/quant/fp16.hpp"
#include "brick/quant/kquants.hpp"
#include "brick/quant/matvec.hpp"
#include "brick/quant/q8_0.hpp"
#include "quant/dot_kernel_table.hpp"
#include "quant/q8k_bsums.hpp"

namespace brick::quant {
namespace detail {
namespace {

// Every backend has a kernel of its own base instruction set for every format, so select_kernel
// always finds one of the requested backend.
template <class Format>
constexpr bool has_every_backend() {
  return has_kernel<Format>(Isa::Scalar) && has_kernel<Format>(Isa::Avx2) && has_kernel<Format>(Isa::Avx512);
}
static_assert(std::apply([](auto... formats) { return (has_every_backend<decltype(formats)>() && ...); },
                         DotFormats{}));

}  // namespace

std::string_view name(Isa isa) noexcept {
  switch (isa) {
    case Isa::Scalar: return "scalar";
    case Isa::Avx2: return "avx2";
    case Isa::AvxVnni: return "avxvnni";
    case Isa::Avx512: return "avx512";
    case Isa::Avx512Vnni: return "avx512vnni";
    case Isa::Avx512Gfni: return "avx512gfni";
    case Isa::Avx512Bf16: return "avx512bf16";
  }
  return "unknown";
}

Backend backend_of(Isa isa) noexcept {
  switch (isa) {
    case Isa::Scalar: return Backend::Scalar;
    case Isa::Avx2:
    case Isa::AvxVnni: return Backend::Avx2;
    case Isa::Avx512:
    case Isa::Avx512Vnni:
    case Isa::Avx512Gfni:
    case Isa::Avx512Bf16: return Backend::Avx512;
  }
  return Backend::Scalar;
}

std::optional<std::string_view> missing_feature(Isa isa, const CpuFeatures& features) noexcept {
  if (const auto missing = brick::missing_feature(backend_of(isa), features)) return missing;
  switch (isa) {
    case Isa::Scalar:
    case Isa::Avx2:
    case Isa::Avx512: return std::nullopt;
    case Isa::AvxVnni:
      if (!features.avxvnni) return "AVX-VNNI";
      return std::nullopt;
    case Isa::Avx512Vnni:
      if (!features.avx512vnni) return "AVX-512 VNNI";
      return std::nullopt;
    case Isa::Avx512Gfni:
      if (!features.avx512vnni) return "AVX-512 VNNI";
      if (!features.gfni) return "GFNI";
      return std::nullopt;
    case Isa::Avx512Bf16:
      if (!features.avx512bf16) return "AVX-512 BF16";
      return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace detail

namespace {

template <class Format>
float checked_dot(std::span<const typename Format::Weight> w, std::span<const typename Format::Activation> x,
                  Backend backend, std::string_view what) {
  if (w.size() != x.size()) {
    throw InvalidArgument(fmt::format("{}: the weight row has {} blocks but the activation row has {}", what,
                                      w.size(), x.size()));
  }
  if constexpr (std::is_same_v<typename Format::Activation, BlockQ8K>) detail::require_consistent_bsums(x, what);
  return detail::select_kernel<Format>(backend).row(w.data(), x.data(), w.size());
}

}  // namespace

std::string_view dot_kernel_name(TensorType weight, Backend backend) {
  std::string_view kernel;
  const bool known =
      detail::with_format(weight, [&](auto format) { kernel = detail::select_kernel<decltype(format)>(backend).name; });
  if (!known) throw InvalidArgument(fmt::format("dot_kernel_name: Brick has no kernels for {} weights", name(weight)));
  return kernel;
}

float dot_f16_f16(std::span<const fp16_t> w, std::span<const fp16_t> x, Backend backend) {
  return checked_dot<detail::F16Format>(w, x, backend, "dot_f16_f16");
}

float dot_bf16_bf16(std::span<const bf16_t> w, std::span<const bf16_t> x, Backend backend) {
  return checked_dot<detail::BF16Format>(w, x, backend, "dot_bf16_bf16");
}

float dot_q8_0_q8_0(std::span<const BlockQ80> w, std::span<const BlockQ80> x, Backend backend) {
  return checked_dot<detail::Q80Format>(w, x, backend, "dot_q8_0_q8_0");
}

float dot_q4k_q8k(std::span<const BlockQ4K> w, std::span<const BlockQ8K> x, Backend backend) {
  return checked_dot<detail::Q4KFormat>(w, x, backend, "dot_q4k_q8k");
}

float dot_q5k_q8k(std::span<const BlockQ5K> w, std::span<const BlockQ8K> x, Backend backend) {
  return checked_dot<detail::Q5KFormat>(w, x, backend, "dot_q5k_q8k");
}

float dot_q6k_q8k(std::span<const BlockQ6K> w, std::span<const BlockQ8K> x, Backend backend) {
  return checked_dot<detail::Q6KFormat>(w, x, backend, "dot_q6k_q8k");
}

}  // namespace brick::quant
