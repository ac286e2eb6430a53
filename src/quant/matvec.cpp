#include "brick/quant/matvec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <vector>

#include "brick/core/error.hpp"
#include "brick/quant/quantize.hpp"
#include "ops/kernels/f32_kernels.hpp"
#include "quant/matvec_rows.hpp"

namespace brick::quant {

std::size_t WeightMatrix::row_bytes() const noexcept {
  return quant::row_bytes(type_, cols_).value_or(0);
}

void validate(const WeightMatrix& w, std::string_view what) {
  if (!is_computable(w.type())) {
    throw InvalidArgument(fmt::format("{}: Brick has no kernels for {} weights", what, name(w.type())));
  }
  const std::size_t block = traits(w.type()).block_values;
  const bool needs_q8k = detail::activation_type(w.type()) == detail::ActivationType::Q8K;
  if (w.cols() == 0 || w.cols() % block != 0 || (needs_q8k && w.cols() % kBlockSize != 0)) {
    throw InvalidArgument(fmt::format("{}: {} columns; {} rows need a positive multiple of {}", what, w.cols(),
                                      name(w.type()), needs_q8k ? kBlockSize : block));
  }
  if (w.rows() == 0 || w.row_bytes() == 0 || w.data().size() / w.row_bytes() != w.rows() || w.data().size() % w.row_bytes() != 0) {
    throw InvalidArgument(fmt::format("{}: {} bytes for {} rows of {} {} values; expected {} rows of {} bytes",
                                      what, w.data().size(), w.rows(), w.cols(), name(w.type()), w.rows(),
                                      w.row_bytes()));
  }
}

void dequantize_row(const WeightMatrix& w, std::size_t r, std::span<float> out) {
  validate(w, "dequantize_row");
  if (r >= w.rows() || out.size() != w.cols()) {
    throw InvalidArgument(fmt::format("dequantize_row: row {} of a {}x{} matrix into {} floats", r, w.rows(),
                                      w.cols(), out.size()));
  }
  dequantize(w.type(), std::span(w.row(r), w.row_bytes()), out);
}

namespace detail {
namespace {

using GenericKernel = void (*)();

template <class Kernel>
GenericKernel erase(Kernel kernel) noexcept {
  return reinterpret_cast<GenericKernel>(kernel);
}

template <class Kernel>
Kernel restore(GenericKernel kernel) noexcept {
  return reinterpret_cast<Kernel>(kernel);
}

using F32RowsKernel = void (*)(const float* w, std::size_t rows, std::size_t cols, const float* x,
                               float* y) noexcept;

F32RowsKernel f32_rows_kernel(DotIsa isa) {
  switch (isa) {
    case DotIsa::Scalar: return ops::kernels::matvec_f32_scalar;
    case DotIsa::Avx2: return ops::kernels::matvec_f32_avx2;
    case DotIsa::Avx512:
    case DotIsa::Avx512Vnni:
    case DotIsa::Avx512Gfni: return ops::kernels::matvec_f32_avx512;
  }
  return ops::kernels::matvec_f32_scalar;
}

template <class Block, class Kernel>
void run_four_runs(GenericKernel kernel, const RowSource* const (&sources)[4], const std::size_t (&firsts)[4],
                   std::size_t count, const BlockQ8K* x, std::size_t blocks, float* const (&out)[4]) noexcept {
  const Block* const starts[4] = {reinterpret_cast<const Block*>(sources[0]->row(firsts[0])),
                                  reinterpret_cast<const Block*>(sources[1]->row(firsts[1])),
                                  reinterpret_cast<const Block*>(sources[2]->row(firsts[2])),
                                  reinterpret_cast<const Block*>(sources[3]->row(firsts[3]))};
  restore<Kernel>(kernel)(starts, count, x, blocks, out);
}

// The calling thread's activation buffers, grown on first use of a wider x.
struct Scratch {
  std::vector<BlockQ8K> q8k;
};

}  // namespace

void require_batch(std::string_view op, std::size_t tokens, std::size_t cols, std::size_t x, std::size_t rows,
                   std::size_t out) {
  if (tokens == 0 || x != tokens * cols || out != tokens * rows) {
    throw InvalidArgument(fmt::format("{}: {} tokens need {} input values and room for {} outputs; got {} and {}", op,
                                      tokens, tokens * cols, tokens * rows, x, out));
  }
}

ActivationType activation_type(TensorType weight) noexcept {
  switch (weight) {
    case TensorType::Q5_K:
    case TensorType::Q6_K: return ActivationType::Q8K;
    default: return ActivationType::F32;
  }
}

RowSource row_source(const WeightMatrix& w, DotIsa isa) {
  RowSource source{w.type(), w.data().data(), w.rows(), w.row_bytes(), w.cols()};
  switch (w.type()) {
    case TensorType::Q5_K:
      source.rows_kernel = erase(dot_q5k_q8k_rows_kernel(isa));
      source.four_runs_kernel = erase(dot_q5k_q8k_four_runs_kernel(isa));
      break;
    case TensorType::Q6_K:
      source.rows_kernel = erase(dot_q6k_q8k_rows_kernel(isa));
      source.four_runs_kernel = erase(dot_q6k_q8k_four_runs_kernel(isa));
      break;
    case TensorType::F32:
      source.rows_kernel = erase(f32_rows_kernel(isa));
      break;
    default:
      throw InvalidArgument(fmt::format("mat-vec: Brick has no kernels for {} weights", name(w.type())));
  }
  return source;
}

Activations prepare_activations(std::span<const RowSource> sources, std::span<const float> x, Backend backend) {
  thread_local Scratch scratch;
  Activations activations;
  activations.cols = x.size();
  activations.f32 = x.data();
  const bool needs_q8k = std::any_of(sources.begin(), sources.end(), [](const RowSource& s) {
    return activation_type(s.type) == ActivationType::Q8K;
  });
  if (needs_q8k) {
    const std::size_t blocks = x.size() / kBlockSize;
    if (scratch.q8k.size() < blocks) scratch.q8k.resize(blocks);
    quantize_q8k(x, std::span(scratch.q8k.data(), blocks), backend);
    activations.q8k = scratch.q8k.data();
  }
  return activations;
}

void dot_source_rows(const RowSource& source, std::size_t first, std::size_t count, const Activations& x,
                     float* out) noexcept {
  const std::byte* w = source.row(first);
  const std::size_t blocks = source.cols / kBlockSize;
  switch (source.type) {
    case TensorType::Q5_K:
      restore<DotQ5KRowsKernel>(source.rows_kernel)(reinterpret_cast<const BlockQ5K*>(w), count, x.q8k, blocks, out);
      return;
    case TensorType::Q6_K:
      restore<DotQ6KRowsKernel>(source.rows_kernel)(reinterpret_cast<const BlockQ6K*>(w), count, x.q8k, blocks, out);
      return;
    case TensorType::F32:
      restore<F32RowsKernel>(source.rows_kernel)(reinterpret_cast<const float*>(w), count, source.cols, x.f32, out);
      return;
    default:
      return;
  }
}

void dot_four_source_runs(const RowSource* const (&sources)[4], const std::size_t (&firsts)[4], std::size_t count,
                          const Activations& x, float* const (&out)[4]) noexcept {
  const TensorType type = sources[0]->type;
  const bool lockstep = std::all_of(std::begin(sources), std::end(sources), [&](const RowSource* s) {
    return s->type == type && s->four_runs_kernel != nullptr;
  });
  const std::size_t blocks = x.cols / kBlockSize;
  if (lockstep && type == TensorType::Q5_K) {
    run_four_runs<BlockQ5K, DotQ5KFourRunsKernel>(sources[0]->four_runs_kernel, sources, firsts, count, x.q8k,
                                                  blocks, out);
  } else if (lockstep && type == TensorType::Q6_K) {
    run_four_runs<BlockQ6K, DotQ6KFourRunsKernel>(sources[0]->four_runs_kernel, sources, firsts, count, x.q8k,
                                                  blocks, out);
  } else {
    for (std::size_t i = 0; i < 4; ++i) dot_source_rows(*sources[i], firsts[i], count, x, out[i]);
  }
}

void dot_rows(std::span<const RowSource> sources, const Activations& x, Range range, std::span<float> out) noexcept {
  std::size_t first_row = 0;  // global index of the current source's row 0
  for (const RowSource& source : sources) {
    const std::size_t begin = std::max(range.begin, first_row);
    const std::size_t end = std::min(range.end, first_row + source.rows);
    if (begin < end) dot_source_rows(source, begin - first_row, end - begin, x, out.data() + begin);
    first_row += source.rows;
  }
}

}  // namespace detail

namespace {

void require_shapes(const WeightMatrix& w, std::size_t x, std::size_t y) {
  validate(w, "matvec");
  if (x != cols(w) || y != rows(w)) {
    throw InvalidArgument(fmt::format("matvec: a {}x{} matrix needs {} input values and room for {} outputs; got "
                                      "{} and {}",
                                      rows(w), cols(w), cols(w), rows(w), x, y));
  }
}

void run_matvec(const detail::RowSource& source, const detail::Activations& x, std::span<float> y,
                ThreadPool& pool) {
  pool.parallel_for(source.rows, [&](Range range, std::size_t) { detail::dot_rows(std::span(&source, 1), x, range, y); });
}

}  // namespace

void matvec(const WeightMatrix& w, std::span<const BlockQ8K> xq, std::span<float> y, ThreadPool& pool,
            Backend backend) {
  require_shapes(w, xq.size() * kBlockSize, y.size());
  if (detail::activation_type(w.type()) != detail::ActivationType::Q8K) {
    throw InvalidArgument(fmt::format("matvec: {} weights do not take Q8_K activations", name(w.type())));
  }
  const detail::RowSource source = detail::row_source(w, dot_isa(backend));
  detail::Activations x;
  x.cols = cols(w);
  x.q8k = xq.data();
  run_matvec(source, x, y, pool);
}

void matvec(const WeightMatrix& w, std::span<const float> x, std::span<float> y, ThreadPool& pool,
            Backend backend) {
  require_shapes(w, x.size(), y.size());
  const detail::RowSource source = detail::row_source(w, dot_isa(backend));
  run_matvec(source, detail::prepare_activations(std::span(&source, 1), x, backend), y, pool);
}

}  // namespace brick::quant
