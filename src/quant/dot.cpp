// Chooses a k-quant dot kernel from the backend and the CPU; the kernels themselves live in
// quant/kernels/, each compiled for its own instruction set. This file is baseline x86-64 code.
#include <fmt/format.h>

#include "brick/core/error.hpp"
#include "brick/quant/dot_kernels.hpp"
#include "brick/quant/kquants.hpp"
#include "quant/kernels/dot_kernels.hpp"

namespace brick::quant {
namespace {

std::string_view missing_feature(DotIsa isa) {
  const CpuFeatures& features = cpu_features();
  const Backend needs = isa == DotIsa::Avx2 ? Backend::Avx2 : Backend::Avx512;
  if (const auto missing = brick::missing_feature(needs, features)) return *missing;
  return !features.avx512vnni || isa == DotIsa::Avx512Vnni ? "AVX-512 VNNI" : "GFNI";
}

template <class Kernel>
Kernel pick(DotIsa isa, Kernel scalar, Kernel avx2, Kernel avx512, Kernel avx512vnni, Kernel avx512gfni) {
  if (!is_supported(isa)) throw BackendUnavailable(name(isa), missing_feature(isa));
  switch (isa) {
    case DotIsa::Scalar: return scalar;
    case DotIsa::Avx2: return avx2;
    case DotIsa::Avx512: return avx512;
    case DotIsa::Avx512Vnni: return avx512vnni;
    case DotIsa::Avx512Gfni: return avx512gfni;
  }
  return scalar;
}

// A rows kernel that runs the single-row kernel kDot on each row in turn.
template <auto kDot, class Block>
void each_row(const Block* w, std::size_t rows, const BlockQ8K* x, std::size_t blocks, float* out) noexcept {
  for (std::size_t r = 0; r < rows; ++r) out[r] = kDot(w + r * blocks, x, blocks);
}

// A four-runs kernel that runs the single-row kernel kDot on each row in turn.
template <auto kDot, class Block>
void each_of_four_runs(const Block* const (&starts)[4], std::size_t count, const BlockQ8K* x, std::size_t blocks,
                       float* const (&out)[4]) noexcept {
  for (std::size_t r = 0; r < 4; ++r) each_row<kDot, Block>(starts[r], count, x, blocks, out[r]);
}

template <class Block>
void require_same_blocks(std::span<const Block> w, std::span<const BlockQ8K> x, std::string_view what) {
  if (w.size() != x.size()) {
    throw InvalidArgument(fmt::format("{}: the weight row has {} blocks but the Q8_K row has {}",
                                      what, w.size(), x.size()));
  }
}

}  // namespace

std::string_view name(DotIsa isa) noexcept {
  switch (isa) {
    case DotIsa::Scalar: return "scalar";
    case DotIsa::Avx2: return "avx2";
    case DotIsa::Avx512: return "avx512";
    case DotIsa::Avx512Vnni: return "avx512vnni";
    case DotIsa::Avx512Gfni: return "avx512gfni";
  }
  return "unknown";
}

bool is_supported(DotIsa isa, const CpuFeatures& features) noexcept {
  switch (isa) {
    case DotIsa::Scalar: return true;
    case DotIsa::Avx2: return brick::is_supported(Backend::Avx2, features);
    case DotIsa::Avx512: return brick::is_supported(Backend::Avx512, features);
    case DotIsa::Avx512Vnni:
      return brick::is_supported(Backend::Avx512, features) && features.avx512vnni;
    case DotIsa::Avx512Gfni:
      return brick::is_supported(Backend::Avx512, features) && features.avx512vnni && features.gfni;
  }
  return false;
}

DotIsa dot_isa(Backend backend) {
  switch (resolve(backend)) {
    case Backend::Avx2: return DotIsa::Avx2;
    case Backend::Avx512:
      if (is_supported(DotIsa::Avx512Gfni)) return DotIsa::Avx512Gfni;
      return is_supported(DotIsa::Avx512Vnni) ? DotIsa::Avx512Vnni : DotIsa::Avx512;
    case Backend::Auto:
    case Backend::Scalar: break;
  }
  return DotIsa::Scalar;
}

DotQ5KKernel dot_q5k_q8k_kernel(DotIsa isa) {
  return pick<DotQ5KKernel>(isa, kernels::dot_q5k_q8k_scalar, kernels::dot_q5k_q8k_avx2,
                            kernels::dot_q5k_q8k_avx512, kernels::dot_q5k_q8k_avx512vnni,
                            kernels::dot_q5k_q8k_avx512gfni);
}

DotQ6KKernel dot_q6k_q8k_kernel(DotIsa isa) {
  return pick<DotQ6KKernel>(isa, kernels::dot_q6k_q8k_scalar, kernels::dot_q6k_q8k_avx2,
                            kernels::dot_q6k_q8k_avx512, kernels::dot_q6k_q8k_avx512vnni,
                            kernels::dot_q6k_q8k_avx512gfni);
}

DotQ5KRowsKernel dot_q5k_q8k_rows_kernel(DotIsa isa) {
  return pick<DotQ5KRowsKernel>(isa, each_row<kernels::dot_q5k_q8k_scalar, BlockQ5K>,
                                each_row<kernels::dot_q5k_q8k_avx2, BlockQ5K>, kernels::dot_q5k_q8k_rows_avx512,
                                kernels::dot_q5k_q8k_rows_avx512vnni, kernels::dot_q5k_q8k_rows_avx512gfni);
}

DotQ6KRowsKernel dot_q6k_q8k_rows_kernel(DotIsa isa) {
  return pick<DotQ6KRowsKernel>(isa, each_row<kernels::dot_q6k_q8k_scalar, BlockQ6K>,
                                each_row<kernels::dot_q6k_q8k_avx2, BlockQ6K>, kernels::dot_q6k_q8k_rows_avx512,
                                kernels::dot_q6k_q8k_rows_avx512vnni, kernels::dot_q6k_q8k_rows_avx512gfni);
}

DotQ5KFourRunsKernel dot_q5k_q8k_four_runs_kernel(DotIsa isa) {
  return pick<DotQ5KFourRunsKernel>(isa, each_of_four_runs<kernels::dot_q5k_q8k_scalar, BlockQ5K>,
                                    each_of_four_runs<kernels::dot_q5k_q8k_avx2, BlockQ5K>,
                                    kernels::dot_q5k_q8k_four_runs_avx512, kernels::dot_q5k_q8k_four_runs_avx512vnni,
                                    kernels::dot_q5k_q8k_four_runs_avx512gfni);
}

DotQ6KFourRunsKernel dot_q6k_q8k_four_runs_kernel(DotIsa isa) {
  return pick<DotQ6KFourRunsKernel>(isa, each_of_four_runs<kernels::dot_q6k_q8k_scalar, BlockQ6K>,
                                    each_of_four_runs<kernels::dot_q6k_q8k_avx2, BlockQ6K>,
                                    kernels::dot_q6k_q8k_four_runs_avx512, kernels::dot_q6k_q8k_four_runs_avx512vnni,
                                    kernels::dot_q6k_q8k_four_runs_avx512gfni);
}

float dot_q5k_q8k(std::span<const BlockQ5K> w, std::span<const BlockQ8K> x, Backend backend) {
  require_same_blocks(w, x, "dot_q5k_q8k");
  return dot_q5k_q8k_kernel(dot_isa(backend))(w.data(), x.data(), w.size());
}

float dot_q6k_q8k(std::span<const BlockQ6K> w, std::span<const BlockQ8K> x, Backend backend) {
  require_same_blocks(w, x, "dot_q6k_q8k");
  return dot_q6k_q8k_kernel(dot_isa(backend))(w.data(), x.data(), w.size());
}

}  // namespace brick::quant
