#include "brick/model/attention.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "brick/core/error.hpp"
#include "brick/core/kernel_recorder.hpp"
#include "brick/ops/matvec.hpp"
#include "brick/ops/softmax.hpp"
#include "brick/quant/fp16.hpp"

namespace brick::model {
namespace {

bool is_f16(const KvCache& cache) noexcept {
  return cache.shape().type == KvType::F16;
}

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

OpCost KvWriteOp::cost(const Input& input) const noexcept {
  const auto n = static_cast<double>(cache_->shape().row_elements() * input.tokens);
  return OpCost{input.tokens, 2.0 * n,
                2.0 * n * (4.0 + static_cast<double>(cache_->shape().element_bytes()))};
}

void KvWriteOp::run(const Input& input, std::span<float> out, Backend backend) const {
  const std::size_t n = cache_->shape().row_elements();
  const std::size_t tokens = input.tokens;
  const std::size_t k_stride = input.k_stride == 0 ? n : input.k_stride;
  const std::size_t v_stride = input.v_stride == 0 ? n : input.v_stride;
  const auto holds = [&](std::span<const float> rows, std::size_t stride) {
    return stride >= n && rows.size() >= (tokens - 1) * stride + n;
  };
  if (tokens == 0 || !holds(input.k, k_stride) || !holds(input.v, v_stride) ||
      out.size() != output_size(input)) {
    throw InvalidArgument(
        fmt::format("{}: {} tokens of K and V rows of {} values, {} and {} apart (and {} outputs) "
                    "expected; got {} and {} values and {} outputs",
                    name(), tokens, n, k_stride, v_stride, output_size(input), input.k.size(),
                    input.v.size(), out.size()));
  }
  for (std::size_t t = 0; t < tokens; ++t) {
    const auto cell = static_cast<CellIndex>(input.cell + t);
    const CellIndex cells[1] = {cell};
    const auto k = input.k.subspan(t * k_stride, n);
    const auto v = input.v.subspan(t * v_stride, n);
    const auto stored = out.subspan(2 * n * t, 2 * n);
    if (is_f16(*cache_)) {
      {
        KernelScope scope("fp32_to_fp16", backend);
        quant::fp32_to_fp16_row(k, k16_, backend);
        quant::fp32_to_fp16_row(v, v16_, backend);
        scope.set_work(2 * n, 2.0 * static_cast<double>(n), 12.0 * static_cast<double>(n));
      }
      cache_->write(input.layer, cells, std::span<const std::uint16_t>(k16_),
                    std::span<const std::uint16_t>(v16_));
      quant::fp16_to_fp32_row(cache_->key_row<std::uint16_t>(input.layer, cell), stored.first(n),
                              backend);
      quant::fp16_to_fp32_row(cache_->value_row<std::uint16_t>(input.layer, cell), stored.last(n),
                              backend);
    } else {
      cache_->write(input.layer, cells, k, v);
      const auto k_row = cache_->key_row<float>(input.layer, cell);
      const auto v_row = cache_->value_row<float>(input.layer, cell);
      std::copy(k_row.begin(), k_row.end(), stored.begin());
      std::copy(v_row.begin(), v_row.end(), stored.begin() + static_cast<std::ptrdiff_t>(n));
    }
  }
}

AttentionOp::AttentionOp(const KvCache& cache, AttentionShape shape, ThreadPool& pool,
                         std::string label)
    : OpIdentity(BrickId::AttentionScore, std::move(label)),
      cache_(&cache),
      shape_(shape),
      pool_(&pool) {
  const KvCacheShape& kv = cache.shape();
  if (shape.n_head == 0 || shape.n_kv_head == 0 || shape.n_head % shape.n_kv_head != 0 ||
      shape.n_kv_head != kv.n_kv_heads || shape.head_dim != kv.head_dim) {
    throw InvalidArgument(fmt::format(
        "{}: {} heads over {} kv heads of {} values, but the cache holds {} kv heads "
        "of {}; the kv heads must divide the heads",
        name(), shape.n_head, shape.n_kv_head, shape.head_dim, kv.n_kv_heads, kv.head_dim));
  }
  scratch_.resize(pool.size());
  for (Scratch& s : scratch_) {
    s.scores.resize(kv.n_cells);
    s.probs.resize(kv.n_cells * (shape.n_head / shape.n_kv_head));
    s.q.resize(shape.head_dim);
    s.half.resize(std::max(kv.n_cells, shape.head_dim));
  }
}

OpCost AttentionOp::cost(const Input& input) const noexcept {
  // Token t of the batch reads cells - tokens + 1 + t cells.
  const auto t = static_cast<double>(input.tokens);
  const double cells_read = t * static_cast<double>(input.cells) - t * (t - 1.0) / 2.0;
  const auto h = static_cast<double>(shape_.n_head);
  const auto d = static_cast<double>(shape_.head_dim);
  const double kv_bytes =
      2.0 * static_cast<double>(input.cells) * static_cast<double>(cache_->shape().row_bytes());
  // Per head and cell: the score (2d), the softmax (~5), the weighted sum (2d).
  return OpCost{input.tokens, h * (4.0 * d + 5.0) * cells_read, kv_bytes + 8.0 * h * d * t};
}

void AttentionOp::convert_kv_head(std::size_t layer, std::size_t kv_head, std::size_t n, bool key, std::span<float> out,
                                  Backend backend) const {
  const std::size_t d = shape_.head_dim;
  const std::size_t width = cache_->shape().row_elements();  // every kv head's values of a cell
  const std::size_t first = kv_head * d;
  if (is_f16(*cache_)) {
    const auto all = key ? cache_->keys<std::uint16_t>(layer) : cache_->values<std::uint16_t>(layer);
    quant::fp16_to_fp32_rows(all.subspan(first, (n - 1) * width + d), n, d, width, out.first(n * d), backend);
  } else {
    const auto all = key ? cache_->keys<float>(layer) : cache_->values<float>(layer);
    for (std::size_t c = 0; c < n; ++c) {
      std::copy_n(all.begin() + static_cast<std::ptrdiff_t>(c * width + first), d,
                  out.begin() + static_cast<std::ptrdiff_t>(c * d));
    }
  }
}

void AttentionOp::require_valid(const Input& input, std::size_t outputs) const {
  const std::size_t width = shape_.n_head * shape_.head_dim;
  const std::size_t tokens = input.tokens;
  if (tokens == 0 || input.q.size() % tokens != 0 || input.q.size() / tokens < width ||
      outputs != tokens * width || input.cells < tokens ||
      input.cells > cache_->shape().n_cells || input.layer >= cache_->shape().n_layers) {
    throw InvalidArgument(
        fmt::format("{}: {} tokens of q in {} values, {} outputs, {} cells of layer {}; expected "
                    "rows of at least {} values, {} outputs, {}..{} cells and a layer below {}",
                    name(), tokens, input.q.size(), outputs, input.cells, input.layer, width,
                    tokens * width, tokens, cache_->shape().n_cells, cache_->shape().n_layers));
  }
}

void AttentionOp::run(const Input& input, std::span<float> out, Backend backend) const {
  require_valid(input, out.size());
  const std::size_t width = shape_.n_head * shape_.head_dim;
  const std::size_t tokens = input.tokens;
  const std::size_t stride = input.q.size() / tokens;
  const std::size_t group = shape_.n_head / shape_.n_kv_head;
  for (Scratch& s : scratch_) {
    if (s.k.size() < input.cells * shape_.head_dim) {
      s.k.resize(input.cells * shape_.head_dim);
      s.v.resize(input.cells * shape_.head_dim);
    }
  }
  // Pieces of work: a kv head and a chunk of tokens (all the heads of its group), or for a single
  // token a kv head and a chunk of its query heads, as many chunks as it takes to give every pool
  // thread a piece. A piece converts its kv head's keys and values once for all its queries.
  constexpr std::size_t kTokensPerPiece = 16;
  const std::size_t head_chunks = std::min(group, (pool_->size() + shape_.n_kv_head - 1) / shape_.n_kv_head);
  const std::size_t chunks = tokens == 1 ? head_chunks : (tokens + kTokensPerPiece - 1) / kTokensPerPiece;
  pool_->parallel_for(shape_.n_kv_head * chunks, [&](Range range, std::size_t slot) {
    Scratch& s = scratch_[slot];
    for (std::size_t i = range.begin; i < range.end; ++i) {
      const std::size_t kv_head = i / chunks;
      const std::size_t chunk = i % chunks;
      const std::size_t first = tokens == 1 ? 0 : chunk * kTokensPerPiece;
      const std::size_t last = tokens == 1 ? 1 : std::min(tokens, first + kTokensPerPiece);
      const std::size_t first_head = kv_head * group + (tokens == 1 ? chunk * group / chunks : 0);
      const std::size_t end_head = kv_head * group + (tokens == 1 ? (chunk + 1) * group / chunks : group);
      // The piece's last token attends to the most cells.
      const std::size_t n = input.cells - tokens + last;
      convert_kv_head(input.layer, kv_head, n, true, s.k, backend);
      convert_kv_head(input.layer, kv_head, n, false, s.v, backend);
      for (std::size_t t = first; t < last; ++t) {
        run_heads(input.q.subspan(t * stride, width), input.cells - tokens + 1 + t, out.subspan(t * width, width),
                  first_head, end_head, backend, s);
      }
    }
  });
}

void AttentionOp::head_weights(std::span<const float> k, std::span<float> q,
                               std::span<float> scores, std::span<float> probs,
                               std::span<std::uint16_t> half, Backend backend) const {
  const std::size_t d = shape_.head_dim;
  const std::size_t n = scores.size();
  const bool f16 = is_f16(*cache_);
  if (f16) round_to_f16(q, half.first(d), backend);
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  ops::matvec(k, n, d, q, scores, backend);
  for (float& score : scores) score *= scale;
  ops::softmax(scores, probs, backend);
  if (f16) round_to_f16(probs, half.first(n), backend);
}

void AttentionOp::run_heads(std::span<const float> token_q, std::size_t n, std::span<float> out, std::size_t first_head,
                            std::size_t end_head, Backend backend, Scratch& s) const {
  const std::size_t d = shape_.head_dim;
  const std::size_t heads = end_head - first_head;
  const std::span<const float> k = std::span(s.k).first(n * d);
  const std::span<const float> v = std::span(s.v).first(n * d);
  const std::span<float> q(s.q);
  const std::span<float> probs = std::span(s.probs).first(heads * n);
  for (std::size_t h = 0; h < heads; ++h) {
    std::copy_n(token_q.begin() + static_cast<std::ptrdiff_t>((first_head + h) * d), d, q.begin());
    head_weights(k, q, std::span(s.scores).first(n), probs.subspan(h * n, n), s.half, backend);
  }
  ops::matvec_transposed_batch(v, n, d, probs, heads, out.subspan(first_head * d, heads * d), backend);
}

void AttentionOp::softmax_weights(const Input& input, std::size_t head, std::span<float> weights,
                                  Backend backend) const {
  const std::size_t d = shape_.head_dim;
  thread_local std::vector<float> k, q, scores;
  thread_local std::vector<std::uint16_t> half;
  require_valid(input, output_size(input));
  const std::size_t n = input.cells;
  if (head >= shape_.n_head || weights.size() != n) {
    throw InvalidArgument(fmt::format(
        "{}: softmax weights of head {} over {} cells into {} values; expected a head below {} "
        "and {} values",
        name(), head, n, weights.size(), shape_.n_head, n));
  }
  // The kv head's keys of the cells, as run() converts them.
  k.resize(n * d);
  half.resize(std::max(n, d));
  convert_kv_head(input.layer, head / (shape_.n_head / shape_.n_kv_head), n, true, k, backend);
  const std::size_t stride = input.q.size() / input.tokens;
  const auto token_q = input.q.subspan((input.tokens - 1) * stride + head * d, d);
  q.assign(token_q.begin(), token_q.end());
  scores.resize(n);
  head_weights(k, q, scores, weights, half, backend);
}

}  // namespace brick::model
