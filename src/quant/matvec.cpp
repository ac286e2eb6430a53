#include "brick/quant/matvec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <vector>

#include "brick/core/error.hpp"
#include "quant/matvec_rows.hpp"

namespace brick::quant {

std::size_t rows(const KQuantMatrix& w) noexcept {
  return std::visit([](const auto& m) { return m.rows; }, w);
}

std::size_t cols(const KQuantMatrix& w) noexcept {
  return std::visit([](const auto& m) { return m.cols; }, w);
}

double bytes(const KQuantMatrix& w) noexcept {
  return std::visit([](const auto& m) { return m.bytes(); }, w);
}

void validate(const KQuantMatrix& w, std::string_view what) {
  std::visit(
      [what](const auto& m) {
        if (m.cols == 0 || m.cols % kBlockSize != 0) {
          throw InvalidArgument(fmt::format("{}: {} columns; k-quant rows need a positive multiple of {}",
                                            what, m.cols, kBlockSize));
        }
        if (m.blocks.size() != m.rows * m.blocks_per_row()) {
          throw InvalidArgument(fmt::format("{}: {} blocks for {} rows of {} columns; expected {}", what,
                                            m.blocks.size(), m.rows, m.cols, m.rows * m.blocks_per_row()));
        }
      },
      w);
}

namespace detail {
namespace {

template <class Block, class Kernel>
void run_four_runs(Kernel kernel, const RowSource* const (&sources)[4], const std::size_t (&firsts)[4],
                   std::size_t count, std::span<const BlockQ8K> xq, float* const (&out)[4]) noexcept {
  const Block* const starts[4] = {
      static_cast<const Block*>(sources[0]->row(firsts[0])), static_cast<const Block*>(sources[1]->row(firsts[1])),
      static_cast<const Block*>(sources[2]->row(firsts[2])), static_cast<const Block*>(sources[3]->row(firsts[3]))};
  kernel(starts, count, xq.data(), xq.size(), out);
}

}  // namespace

RowSource row_source(const KQuantMatrix& w, DotIsa isa) {
  RowSource source;
  if (const auto* q5 = std::get_if<Q5KMatrix>(&w)) {
    source = {q5->blocks.data(), q5->rows, q5->blocks_per_row() * sizeof(BlockQ5K),
              dot_q5k_q8k_rows_kernel(isa), nullptr, dot_q5k_q8k_four_runs_kernel(isa), nullptr};
  } else {
    const auto& q6 = std::get<Q6KMatrix>(w);
    source = {q6.blocks.data(), q6.rows, q6.blocks_per_row() * sizeof(BlockQ6K), nullptr,
              dot_q6k_q8k_rows_kernel(isa), nullptr, dot_q6k_q8k_four_runs_kernel(isa)};
  }
  return source;
}

void dot_four_source_runs(const RowSource* const (&sources)[4], const std::size_t (&firsts)[4], std::size_t count,
                          std::span<const BlockQ8K> xq, float* const (&out)[4]) noexcept {
  const auto all_have = [&](auto kernel) {
    return std::all_of(std::begin(sources), std::end(sources),
                       [&](const RowSource* s) { return s->*kernel != nullptr; });
  };
  if (all_have(&RowSource::q5k_four_runs)) {
    run_four_runs<BlockQ5K>(sources[0]->q5k_four_runs, sources, firsts, count, xq, out);
  } else if (all_have(&RowSource::q6k_four_runs)) {
    run_four_runs<BlockQ6K>(sources[0]->q6k_four_runs, sources, firsts, count, xq, out);
  } else {
    for (std::size_t i = 0; i < 4; ++i) dot_source_rows(*sources[i], firsts[i], count, xq, out[i]);
  }
}

void dot_rows(std::span<const RowSource> sources, std::span<const BlockQ8K> xq, Range range,
              std::span<float> out) noexcept {
  std::size_t first_row = 0;  // global index of the current source's row 0
  for (const RowSource& source : sources) {
    const std::size_t begin = std::max(range.begin, first_row);
    const std::size_t end = std::min(range.end, first_row + source.rows);
    if (begin < end) dot_source_rows(source, begin - first_row, end - begin, xq, out.data() + begin);
    first_row += source.rows;
  }
}

std::span<const BlockQ8K> quantize_activation(std::span<const float> x, Backend backend) {
  thread_local std::vector<BlockQ8K> scratch;
  const std::size_t blocks = x.size() / kBlockSize;
  if (scratch.size() < blocks) scratch.resize(blocks);
  const std::span<BlockQ8K> out(scratch.data(), blocks);
  quantize_q8k(x, out, backend);
  return out;
}

}  // namespace detail

namespace {

void require_output(const KQuantMatrix& w, std::size_t y) {
  if (y != rows(w)) {
    throw InvalidArgument(fmt::format("matvec: a {}x{} matrix writes {} outputs; got room for {}", rows(w),
                                      cols(w), rows(w), y));
  }
}

void run_matvec(const KQuantMatrix& w, std::span<const BlockQ8K> xq, std::span<float> y, ThreadPool& pool,
                Backend backend) {
  const detail::RowSource source = detail::row_source(w, dot_isa(backend));
  pool.parallel_for(rows(w), [&](Range range, std::size_t) {
    detail::dot_rows(std::span(&source, 1), xq, range, y);
  });
}

}  // namespace

void matvec(const KQuantMatrix& w, std::span<const BlockQ8K> xq, std::span<float> y, ThreadPool& pool,
            Backend backend) {
  validate(w, "matvec");
  if (xq.size() * kBlockSize != cols(w)) {
    throw InvalidArgument(fmt::format("matvec: a {}x{} matrix needs {} Q8_K input blocks; got {}", rows(w),
                                      cols(w), cols(w) / kBlockSize, xq.size()));
  }
  require_output(w, y.size());
  run_matvec(w, xq, y, pool, backend);
}

void matvec(const KQuantMatrix& w, std::span<const float> x, std::span<float> y, ThreadPool& pool,
            Backend backend) {
  validate(w, "matvec");
  if (x.size() != cols(w)) {
    throw InvalidArgument(fmt::format("matvec: a {}x{} matrix needs {} input values; got {}", rows(w),
                                      cols(w), cols(w), x.size()));
  }
  require_output(w, y.size());
  run_matvec(w, detail::quantize_activation(x, backend), y, pool, backend);
}

}  // namespace brick::quant
