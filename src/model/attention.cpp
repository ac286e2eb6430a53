#include "brick/model/attention.hpp"

#include <fmt/format.h>

#include <cmath>

#include "brick/core/error.hpp"
#include "brick/ops/dot.hpp"
#include "brick/ops/elementwise.hpp"
#include "brick/ops/softmax.hpp"
#include "brick/quant/fp16.hpp"

namespace brick::model {
namespace {

bool is_f16(const KvCache& cache) noexcept { return cache.shape().type == KvType::F16; }

// values rounded to F16 and back, in place.
void round_to_f16(std::span<float> values, std::span<std::uint16_t> scratch, Backend backend) {
  quant::fp32_to_fp16_row(values, scratch, backend);
  quant::fp16_to_fp32_row(scratch, values, backend);
}

}  // namespace

KvWriteOp::KvWriteOp(KvCache& cache, std::string label)
    : OpIdentity(BrickId::KvCacheWrite, std::move(label)), cache_(&cache) {
  k16_.resize(cache.shape().row_elements());
  v16_.resize(cache.shape().row_elements());
}

OpCost KvWriteOp::cost(const Input&) const noexcept {
  const auto n = static_cast<double>(cache_->shape().row_elements());
  return OpCost{1, 2.0 * n, 2.0 * n * (4.0 + static_cast<double>(cache_->shape().element_bytes()))};
}

void KvWriteOp::run(const Input& input, std::span<float> out, Backend backend) const {
  const std::size_t n = cache_->shape().row_elements();
  if (input.k.size() != n || input.v.size() != n || out.size() != 2 * n) {
    throw InvalidArgument(fmt::format("{}: K and V rows of {} values each (and {} outputs) expected; got {}, {} "
                                      "and {}",
                                      name(), n, 2 * n, input.k.size(), input.v.size(), out.size()));
  }
  const CellIndex cells[1] = {input.cell};
  if (is_f16(*cache_)) {
    quant::fp32_to_fp16_row(input.k, k16_, backend);
    quant::fp32_to_fp16_row(input.v, v16_, backend);
    cache_->write(input.layer, cells, std::span<const std::uint16_t>(k16_), std::span<const std::uint16_t>(v16_));
    quant::fp16_to_fp32_row(cache_->key_row<std::uint16_t>(input.layer, input.cell), out.first(n), backend);
    quant::fp16_to_fp32_row(cache_->value_row<std::uint16_t>(input.layer, input.cell), out.last(n), backend);
  } else {
    cache_->write(input.layer, cells, input.k, input.v);
    const auto k = cache_->key_row<float>(input.layer, input.cell);
    const auto v = cache_->value_row<float>(input.layer, input.cell);
    std::copy(k.begin(), k.end(), out.begin());
    std::copy(v.begin(), v.end(), out.begin() + static_cast<std::ptrdiff_t>(n));
  }
}

AttentionOp::AttentionOp(const KvCache& cache, AttentionShape shape, ThreadPool& pool, std::string label)
    : OpIdentity(BrickId::AttentionScore, std::move(label)), cache_(&cache), shape_(shape), pool_(&pool) {
  const KvCacheShape& kv = cache.shape();
  if (shape.n_head == 0 || shape.n_kv_head == 0 || shape.n_head % shape.n_kv_head != 0 ||
      shape.n_kv_head != kv.n_kv_heads || shape.head_dim != kv.head_dim) {
    throw InvalidArgument(fmt::format("{}: {} heads over {} kv heads of {} values, but the cache holds {} kv heads "
                                      "of {}; the kv heads must divide the heads",
                                      name(), shape.n_head, shape.n_kv_head, shape.head_dim, kv.n_kv_heads,
                                      kv.head_dim));
  }
  scratch_.resize(pool.size());
  for (Scratch& s : scratch_) {
    s.scores.resize(kv.n_cells);
    s.probs.resize(kv.n_cells);
    s.q.resize(shape.head_dim);
    s.row.resize(shape.head_dim);
    s.half.resize(std::max(kv.n_cells, shape.head_dim));
  }
}

OpCost AttentionOp::cost(const Input& input) const noexcept {
  const auto n = static_cast<double>(input.cells);
  const auto h = static_cast<double>(shape_.n_head);
  const auto d = static_cast<double>(shape_.head_dim);
  const double kv_bytes = 2.0 * n * static_cast<double>(cache_->shape().row_bytes());
  // Per head: the scores (2nd), the softmax (~5n), the weighted sum (2nd).
  return OpCost{1, h * (4.0 * n * d + 5.0 * n), kv_bytes + 8.0 * h * d};
}

void AttentionOp::run(const Input& input, std::span<float> out, Backend backend) const {
  const std::size_t d = shape_.head_dim;
  if (input.q.size() != shape_.n_head * d || out.size() != shape_.n_head * d || input.cells == 0 ||
      input.cells > cache_->shape().n_cells || input.layer >= cache_->shape().n_layers) {
    throw InvalidArgument(fmt::format("{}: q of {} values, {} outputs, {} cells of layer {}; expected {} values, "
                                      "1..{} cells and a layer below {}",
                                      name(), input.q.size(), out.size(), input.cells, input.layer,
                                      shape_.n_head * d, cache_->shape().n_cells, cache_->shape().n_layers));
  }
  pool_->parallel_for(shape_.n_head, [&](Range range, std::size_t slot) {
    for (std::size_t head = range.begin; head < range.end; ++head) run_head(input, head, out, backend, slot);
  });
}

void AttentionOp::run_head(const Input& input, std::size_t head, std::span<float> out, Backend backend,
                           std::size_t thread) const {
  const std::size_t d = shape_.head_dim;
  const std::size_t n = input.cells;
  const std::size_t kv_offset = head / (shape_.n_head / shape_.n_kv_head) * d;
  const bool f16 = is_f16(*cache_);
  Scratch& s = scratch_[thread];
  const std::span<float> q(s.q);
  std::copy_n(input.q.begin() + static_cast<std::ptrdiff_t>(head * d), d, q.begin());
  if (f16) round_to_f16(q, std::span(s.half).first(d), backend);

  // A cell's K or V slice of this head's kv head, as floats.
  const auto row = [&](bool key, std::size_t cell) -> std::span<const float> {
    const auto index = static_cast<CellIndex>(cell);
    if (f16) {
      const auto half = (key ? cache_->key_row<std::uint16_t>(input.layer, index)
                             : cache_->value_row<std::uint16_t>(input.layer, index))
                            .subspan(kv_offset, d);
      quant::fp16_to_fp32_row(half, s.row, backend);
      return s.row;
    }
    return (key ? cache_->key_row<float>(input.layer, index) : cache_->value_row<float>(input.layer, index))
        .subspan(kv_offset, d);
  };

  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  const std::span<float> scores = std::span(s.scores).first(n);
  const std::span<float> probs = std::span(s.probs).first(n);
  for (std::size_t c = 0; c < n; ++c) scores[c] = ops::dot(row(true, c), q, backend) * scale;
  ops::softmax(scores, probs, backend);
  if (f16) round_to_f16(probs, std::span(s.half).first(n), backend);

  const std::span<float> out_head = out.subspan(head * d, d);
  std::fill(out_head.begin(), out_head.end(), 0.0f);
  for (std::size_t c = 0; c < n; ++c) ops::axpy(probs[c], row(false, c), out_head, backend);
}

}  // namespace brick::model
