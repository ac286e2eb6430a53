#include "brick/quant/matvec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <vector>

#include "brick/core/error.hpp"
#include "brick/core/kernel_recorder.hpp"
#include "brick/quant/bf16.hpp"
#include "brick/quant/fp16.hpp"
#include "brick/quant/q8_0.hpp"
#include "brick/quant/quantize.hpp"
#include "quant/dot_kernel_table.hpp"
#include "quant/matvec_rows.hpp"
#include "quant/q8k_bsums.hpp"

namespace brick::quant {

std::size_t WeightMatrix::row_bytes() const noexcept {
  return quant::row_bytes(type_, layout_, cols_).value_or(0);
}

void validate(const WeightMatrix& w, std::string_view what) {
  if (!is_computable(w.type())) {
    throw InvalidArgument(fmt::format("{}: Brick has no kernels for {} weights", what, name(w.type())));
  }
  if (!block_bytes(w.type(), w.layout())) {
    throw InvalidArgument(fmt::format("{}: {} weights have no {} layout", what, name(w.type()), name(w.layout())));
  }
  const std::size_t block = *block_values(w.type(), w.layout());
  if (w.cols() == 0 || w.cols() % block != 0) {
    throw InvalidArgument(fmt::format("{}: {} columns; {} rows in the {} layout need a positive multiple of {}", what,
                                      w.cols(), name(w.type()), name(w.layout()), block));
  }
  if (w.rows() == 0 || w.row_bytes() == 0 || w.data().size() / w.row_bytes() != w.rows() || w.data().size() % w.row_bytes() != 0) {
    throw InvalidArgument(fmt::format("{}: {} bytes for {} rows of {} {} values; expected {} rows of {} bytes",
                                      what, w.data().size(), w.rows(), w.cols(), name(w.type()), w.rows(),
                                      w.row_bytes()));
  }
}

namespace {

// A repacked row back in the plain layout first (the same values), dequantized as such.
template <class Repacked, class Plain>
void dequantize_repacked(std::span<const std::byte> row, std::span<float> out,
                         void (*to_plain)(std::span<const Repacked>, std::span<Plain>),
                         void (*dequantize_plain)(std::span<const Plain>, std::span<float>)) {
  thread_local std::vector<Plain> plain;
  plain.resize(out.size() / traits(BlockTraits<Plain>::type).block_values);
  to_plain({reinterpret_cast<const Repacked*>(row.data()), row.size() / sizeof(Repacked)}, plain);
  dequantize_plain(plain, out);
}

}  // namespace

void dequantize_row(const WeightMatrix& w, std::size_t r, std::span<float> out) {
  validate(w, "dequantize_row");
  if (r >= w.rows() || out.size() != w.cols()) {
    throw InvalidArgument(fmt::format("dequantize_row: row {} of a {}x{} matrix into {} floats", r, w.rows(),
                                      w.cols(), out.size()));
  }
  const std::span<const std::byte> row(w.row(r), w.row_bytes());
  if (w.layout() == WeightLayout::Plain) return dequantize(w.type(), row, out);
  if (w.type() == TensorType::Q4_K) return dequantize_repacked(row, out, &deinterleave_q4k, &dequantize_q4k);
  if (w.type() == TensorType::Q5_K) return dequantize_repacked(row, out, &deinterleave_q5k, &dequantize_q5k);
  if (w.type() == TensorType::Q6_K) return dequantize_repacked(row, out, &deinterleave_q6k, &dequantize_q6k);
  dequantize_repacked(row, out, &ungroup_q8_0, &dequantize_q8_0);
}

namespace detail {
namespace {

template <class Format>
void rows_call(const RowSource& source, std::size_t first, std::size_t count, const Activations& x,
               float* out) noexcept {
  static_cast<const DotKernel<Format>*>(source.kernel)
      ->rows(reinterpret_cast<const typename Format::Weight*>(source.row(first)), count, x.get<Format>(),
             source.blocks, out);
}

template <class Format>
void four_runs_call(const RowSource* const (&sources)[4], const std::size_t (&firsts)[4], std::size_t count,
                    const Activations& x, float* const (&out)[4]) noexcept {
  using Weight = typename Format::Weight;
  const Weight* const starts[4] = {reinterpret_cast<const Weight*>(sources[0]->row(firsts[0])),
                                   reinterpret_cast<const Weight*>(sources[1]->row(firsts[1])),
                                   reinterpret_cast<const Weight*>(sources[2]->row(firsts[2])),
                                   reinterpret_cast<const Weight*>(sources[3]->row(firsts[3]))};
  static_cast<const DotKernel<Format>*>(sources[0]->kernel)
      ->four_runs(starts, count, x.get<Format>(), sources[0]->blocks, out);
}

template <class Format>
void tokens_call(const RowSource& source, std::size_t first, std::size_t count, const Activations& x,
                 std::size_t tokens, float* out, std::size_t out_stride) noexcept {
  run_gemm(*static_cast<const DotKernel<Format>*>(source.kernel),
           reinterpret_cast<const typename Format::Weight*>(source.row(first)), count, x.get<Format>(), tokens,
           source.blocks, out, out_stride);
}

// The calling thread's activation buffers, grown on first use of a wider x.
struct Scratch {
  std::vector<BlockQ8K> q8k;
  std::vector<BlockQ8KInterleaved> q8k_interleaved;
  std::vector<BlockQ80> q8_0;
  std::vector<BlockQ80Group> q8_0_grouped;
  std::vector<fp16_t> f16;
  std::vector<bf16_t> bf16;
};

template <class Block>
std::span<Block> grown(std::vector<Block>& buffer, std::size_t size) {
  if (buffer.size() < size) buffer.resize(size);
  return {buffer.data(), size};
}

// Reports one conversion of x to the recorder: x read as floats, `out` written; a conversion to a
// half type is one operation per value.
template <class Block>
void set_conversion_work(KernelScope& scope, std::span<const float> x, std::span<const Block> out,
                         double flops_per_value) noexcept {
  const auto n = static_cast<double>(x.size());
  scope.set_work(x.size(), flops_per_value * n, 4.0 * n + static_cast<double>(out.size_bytes()));
}

// Q8_K blocks permuted for interleaved weights, into the scratch buffer.
const BlockQ8KInterleaved* interleaved(std::span<const BlockQ8K> q8k, Scratch& scratch, Backend backend) {
  KernelScope scope("interleave_q8k", backend);
  const std::span<BlockQ8KInterleaved> out = grown(scratch.q8k_interleaved, q8k.size());
  interleave_q8k(q8k, out);
  scope.set_work(q8k.size(), 0.0, 2.0 * static_cast<double>(out.size_bytes()));
  return out.data();
}

// x in `type`, converted into the scratch buffers unless it is x itself. `q8k` is x in Q8_K when
// an earlier conversion made it, else null; it is set when this one makes it.
const void* convert(ActivationType type, std::span<const float> x, Scratch& scratch, Backend backend,
                    const void*& q8k) {
  switch (type) {
    case ActivationType::F32: return x.data();
    case ActivationType::Q8K:
    case ActivationType::Q8KInterleaved: {
      const std::span<BlockQ8K> blocks = grown(scratch.q8k, x.size() / kBlockSize);
      if (q8k == nullptr) {
        KernelScope scope("quantize_q8k", backend);
        quantize_q8k(x, blocks, backend);
        set_conversion_work<BlockQ8K>(scope, x, std::span<const BlockQ8K>(blocks), kQuantizeFlopsPerValue);
        q8k = blocks.data();
      }
      return type == ActivationType::Q8K ? q8k : interleaved(blocks, scratch, backend);
    }
    case ActivationType::Q8_0:
    case ActivationType::Q8_0Grouped: {
      KernelScope scope("quantize_q8_0", backend);
      const std::span<BlockQ80> out = grown(scratch.q8_0, x.size() / kQ80BlockSize);
      quantize_q8_0_activation(x, out, backend);
      set_conversion_work<BlockQ80>(scope, x, out, kQuantizeFlopsPerValue);
      if (type == ActivationType::Q8_0) return out.data();
      const std::span<BlockQ80Group> grouped = grown(scratch.q8_0_grouped, out.size() / BlockQ80Group::kBlocks);
      group_q8_0(out, grouped);
      return grouped.data();
    }
    case ActivationType::F16: {
      KernelScope scope("fp32_to_fp16", backend);
      const std::span<fp16_t> out = grown(scratch.f16, x.size());
      fp32_to_fp16_activation(x, out, backend);
      set_conversion_work<fp16_t>(scope, x, out, 1.0);
      return out.data();
    }
    case ActivationType::BF16: {
      KernelScope scope("fp32_to_bf16", backend);
      const std::span<bf16_t> out = grown(scratch.bf16, x.size());
      fp32_to_bf16_row(x, out, backend);
      set_conversion_work<bf16_t>(scope, x, out, 1.0);
      return out.data();
    }
  }
  return nullptr;
}

// The bytes of one row of `cols` activations in `type`.
double activation_bytes(ActivationType type, std::size_t cols) noexcept {
  const auto n = static_cast<double>(cols);
  switch (type) {
    case ActivationType::F32: return 4.0 * n;
    case ActivationType::Q8K:
      return static_cast<double>(cols / kBlockSize * sizeof(BlockQ8K));
    case ActivationType::Q8KInterleaved:
      return static_cast<double>(cols / kBlockSize * sizeof(BlockQ8KInterleaved));
    case ActivationType::Q8_0:
    case ActivationType::Q8_0Grouped: return static_cast<double>(cols / kQ80BlockSize * sizeof(BlockQ80));
    case ActivationType::F16:
    case ActivationType::BF16: break;
  }
  return 2.0 * n;
}

}  // namespace

void require_batch(std::string_view op, std::size_t tokens, std::size_t cols, std::size_t x, std::size_t rows,
                   std::size_t out) {
  if (tokens == 0 || x != tokens * cols || out != tokens * rows) {
    throw InvalidArgument(fmt::format("{}: {} tokens need {} input values and room for {} outputs; got {} and {}", op,
                                      tokens, tokens * cols, tokens * rows, x, out));
  }
}

namespace {

bool share_kernel(std::span<const RowSource> sources) noexcept {
  return !sources.empty() && std::all_of(sources.begin(), sources.end(), [&](const RowSource& s) {
    return s.kernel == sources.front().kernel;
  });
}

}  // namespace

std::string_view pass_name(std::span<const RowSource> sources) noexcept {
  return share_kernel(sources) ? sources.front().kernel_name : "dot_rows_mixed";
}

std::string_view gemm_pass_name(std::span<const RowSource> sources, std::size_t tokens) noexcept {
  if (!share_kernel(sources)) return "gemm_rows_mixed";
  const RowSource& source = sources.front();
  return runs_gemm_kernel(source.gemm_batch, tokens) ? source.gemm_name : source.kernel_name;
}

double pass_bytes(std::span<const RowSource> sources, std::size_t cols, std::size_t tokens) noexcept {
  const auto t = static_cast<double>(tokens);
  double total = 0.0;
  bool seen[kActivationTypes] = {};
  for (const RowSource& source : sources) {
    total += static_cast<double>(source.rows) * (static_cast<double>(source.row_bytes) + 4.0 * t);
    auto& converted = seen[static_cast<std::size_t>(source.activation)];
    if (!converted) total += t * activation_bytes(source.activation, cols);
    converted = true;
  }
  return total;
}

RowSource row_source(const WeightMatrix& w, Backend backend) {
  RowSource source{w.type(), ActivationType::F32, w.data().data(), w.rows(), w.row_bytes()};
  const bool known = with_format(w.type(), w.layout(), [&](auto format) {
    using Format = decltype(format);
    source.activation = Format::kActivation;
    source.blocks = w.cols() / Format::kValues;
    source.kernel = &select_kernel<Format>(backend);
    source.kernel_name = select_kernel<Format>(backend).name;
    source.rows_call = &rows_call<Format>;
    source.four_runs_call = &four_runs_call<Format>;
    source.gemm_name = select_kernel<Format>(backend).gemm_name;
    source.gemm_batch = select_kernel<Format>(backend).gemm_batch;
    source.tokens_call = &tokens_call<Format>;
  });
  if (!known) {
    throw InvalidArgument(
        fmt::format("mat-vec: Brick has no kernels for {} weights in the {} layout", name(w.type()), name(w.layout())));
  }
  return source;
}

Activations prepare_activations(std::span<const RowSource> sources, std::span<const float> x, Backend backend) {
  thread_local Scratch scratch;
  Activations activations;
  activations.cols = x.size();
  const void* q8k = nullptr;
  for (const RowSource& source : sources) {
    if (activations.data[static_cast<std::size_t>(source.activation)] == nullptr) {
      activations.set(source.activation, convert(source.activation, x, scratch, backend, q8k));
    }
  }
  return activations;
}

void dot_four_source_runs(const RowSource* const (&sources)[4], const std::size_t (&firsts)[4], std::size_t count,
                          const Activations& x, float* const (&out)[4]) noexcept {
  const bool lockstep = std::all_of(std::begin(sources), std::end(sources), [&](const RowSource* s) {
    return s->kernel == sources[0]->kernel && s->blocks == sources[0]->blocks;
  });
  if (lockstep) {
    sources[0]->four_runs_call(sources, firsts, count, x, out);
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

void dot_rows_tokens(std::span<const RowSource> sources, const Activations& x, std::size_t tokens, Range range,
                     float* out, std::size_t out_stride) noexcept {
  std::size_t first_row = 0;  // global index of the current source's row 0
  for (const RowSource& source : sources) {
    const std::size_t begin = std::max(range.begin, first_row);
    const std::size_t end = std::min(range.end, first_row + source.rows);
    if (begin < end) source.tokens_call(source, begin - first_row, end - begin, x, tokens, out + begin, out_stride);
    first_row += source.rows;
  }
}

void gemm(std::span<const RowSource> sources, std::span<const float> x, std::size_t tokens, std::span<float> out,
          ThreadPool& pool, Backend backend) {
  std::size_t width = 0;
  for (const RowSource& source : sources) width += source.rows;
  const std::size_t cols = x.size() / tokens;
  Activations xq = prepare_activations(sources, x, backend);
  xq.cols = cols;
  KernelScope scope(gemm_pass_name(sources, tokens), backend);
  pool.parallel_for(width, [&](Range range, std::size_t) { dot_rows_tokens(sources, xq, tokens, range, out.data(), width); });
  scope.set_work(width * tokens, 2.0 * static_cast<double>(width * cols * tokens), pass_bytes(sources, cols, tokens));
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
                ThreadPool& pool, Backend backend) {
  KernelScope scope(source.kernel_name, backend);
  pool.parallel_for(source.rows, [&](Range range, std::size_t) { detail::dot_rows(std::span(&source, 1), x, range, y); });
  scope.set_work(source.rows, 2.0 * static_cast<double>(source.rows) * static_cast<double>(x.cols),
                 detail::pass_bytes(std::span(&source, 1), x.cols));
}

}  // namespace

void matvec(const WeightMatrix& w, std::span<const BlockQ8K> xq, std::span<float> y, ThreadPool& pool,
            Backend backend) {
  require_shapes(w, xq.size() * kBlockSize, y.size());
  const detail::RowSource source = detail::row_source(w, backend);
  if (source.activation != detail::ActivationType::Q8K && source.activation != detail::ActivationType::Q8KInterleaved) {
    throw InvalidArgument(fmt::format("matvec: {} weights do not take Q8_K activations", name(w.type())));
  }
  detail::require_consistent_bsums(xq, "matvec");
  detail::Activations x;
  x.cols = cols(w);
  if (source.activation == detail::ActivationType::Q8K) {
    x.set(detail::ActivationType::Q8K, xq.data());
  } else {
    thread_local std::vector<BlockQ8KInterleaved> permuted;
    permuted.resize(xq.size());
    interleave_q8k(xq, permuted);
    x.set(detail::ActivationType::Q8KInterleaved, permuted.data());
  }
  run_matvec(source, x, y, pool, backend);
}

void matvec(const WeightMatrix& w, std::span<const float> x, std::span<float> y, ThreadPool& pool,
            Backend backend) {
  require_shapes(w, x.size(), y.size());
  const detail::RowSource source = detail::row_source(w, backend);
  run_matvec(source, detail::prepare_activations(std::span(&source, 1), x, backend), y, pool, backend);
}

}  // namespace brick::quant
