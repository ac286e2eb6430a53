#include "brick/quant/fused_ops.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "brick/core/error.hpp"
#include "brick/core/kernel_recorder.hpp"
#include "quant/lockstep.hpp"
#include "quant/matvec_rows.hpp"
#include "quant/row_walk.hpp"

namespace brick::quant {
namespace {

// ggml's silu: x / (1 + e^-x), in float.
inline float silu(float x) noexcept { return x / (1.0f + std::exp(-x)); }

// out[r] = silu(gate row r . x) * (up row r . x) for the rows of `range`, in tiles of gate rows then
// up rows, each a rows kernel call: one DRAM stream at a time (row_walk.hpp). The gate products go
// straight to `out`, the up ones to a 4 KiB buffer.
void gate_up_in_tiles(const detail::RowSource& gate, const detail::RowSource& up, const detail::Activations& xq,
                      Range range, std::span<float> out) {
  constexpr std::size_t kTileRows = 1024;
  thread_local std::vector<float> up_values;
  up_values.resize(std::min(kTileRows, range.size()));
  for (std::size_t row = range.begin; row < range.end; row += kTileRows) {
    const std::size_t count = std::min(kTileRows, range.end - row);
    detail::dot_source_rows(gate, row, count, xq, out.data() + row);
    detail::dot_source_rows(up, row, count, xq, up_values.data());
    for (std::size_t i = 0; i < count; ++i) out[row + i] = silu(out[row + i]) * up_values[i];
  }
}

// The same with the gate and up rows i and i + half of the range in lockstep: four DRAM streams,
// each activation block loaded once for the four. A chunk of rows per kernel call (the kernel's
// set-up and the call cost as much as a few rows when paid per row); the dot products of a chunk
// wait in a small buffer on the stack, and only the activated products reach `out`. half is odd
// (see lockstep.hpp); the rows past 2 * half go on their own.
void gate_up_in_four_runs(const detail::RowSource& gate, const detail::RowSource& up, const detail::Activations& xq,
                          Range range, std::span<float> out) {
  constexpr std::size_t kChunk = 32;
  const std::size_t half = detail::lockstep_run(range.size(), 2);
  const detail::RowSource* const sources[4] = {&gate, &gate, &up, &up};
  for (std::size_t done = 0; done < half; done += kChunk) {
    const std::size_t row = range.begin + done;
    const std::size_t count = std::min(kChunk, half - done);
    float gate_values[2][kChunk];
    float up_values[2][kChunk];
    detail::dot_four_source_runs(sources, {row, row + half, row, row + half}, count, xq,
                                 {gate_values[0], gate_values[1], up_values[0], up_values[1]});
    for (std::size_t i = 0; i < count; ++i) {
      out[row + i] = silu(gate_values[0][i]) * up_values[0][i];
      out[row + half + i] = silu(gate_values[1][i]) * up_values[1][i];
    }
  }
  for (std::size_t row = range.begin + 2 * half; row < range.end; ++row) {
    float gate_value;
    float up_value;
    detail::dot_source_rows(gate, row, 1, xq, &gate_value);
    detail::dot_source_rows(up, row, 1, xq, &up_value);
    out[row] = silu(gate_value) * up_value;
  }
}

}  // namespace

FusedQKVOp::FusedQKVOp(WeightMatrix wq, WeightMatrix wk, WeightMatrix wv, std::size_t n_heads,
                       std::size_t n_kv_heads, std::size_t head_dim, ThreadPool& pool, std::string label)
    : OpIdentity(BrickId::QkvProjection, std::move(label)),
      wq_(wq), wk_(wk), wv_(wv), n_heads_(n_heads), n_kv_heads_(n_kv_heads), head_dim_(head_dim), pool_(&pool) {
  validate(wq_, "FusedQKVOp Wq");
  validate(wk_, "FusedQKVOp Wk");
  validate(wv_, "FusedQKVOp Wv");
  if (n_heads == 0 || n_kv_heads == 0 || head_dim == 0 || n_heads % n_kv_heads != 0) {
    throw InvalidArgument(fmt::format("FusedQKVOp: {} heads, {} KV heads of {}: every count must be "
                                      "positive and the KV heads must divide the heads",
                                      n_heads, n_kv_heads, head_dim));
  }
  if (rows(wq_) != q_size() || rows(wk_) != kv_size() || rows(wv_) != kv_size() ||
      cols(wk_) != cols(wq_) || cols(wv_) != cols(wq_)) {
    throw InvalidArgument(fmt::format(
        "FusedQKVOp: Wq {}x{}, Wk {}x{}, Wv {}x{}; expected {}x{h}, {}x{h}, {}x{h} (h = hidden size)",
        rows(wq_), cols(wq_), rows(wk_), cols(wk_), rows(wv_), cols(wv_), q_size(), kv_size(), kv_size(),
        fmt::arg("h", cols(wq_))));
  }
}

OpCost FusedQKVOp::cost(const Input& input) const noexcept {
  const auto h = static_cast<double>(hidden());
  const auto outputs = static_cast<double>(q_size() + 2 * kv_size());
  const auto t = static_cast<double>(input.tokens);
  return OpCost{input.tokens, (2.0 * outputs * h + detail::kQuantizeFlopsPerValue * h) * t,
                bytes(wq_) + bytes(wk_) + bytes(wv_) + (4.0 * h + 4.0 * outputs) * t};
}

void FusedQKVOp::run(const Input& input, std::span<float> out, Backend backend) const {
  const std::size_t width = q_size() + 2 * kv_size();
  detail::require_batch(name(), input.tokens, hidden(), input.x.size(), width, out.size());
  if (input.tokens == 1) {
    run_token(input.x, out, backend);
    return;
  }
  const std::array<detail::RowSource, 3> sources = {
      detail::row_source(wq_, backend), detail::row_source(wk_, backend), detail::row_source(wv_, backend)};
  detail::gemm(sources, input.x, input.tokens, out, *pool_, backend);
}

void FusedQKVOp::run_token(std::span<const float> x_row, std::span<float> out, Backend backend) const {
  const std::array<detail::RowSource, 3> sources = {
      detail::row_source(wq_, backend), detail::row_source(wk_, backend), detail::row_source(wv_, backend)};
  const detail::Activations x = detail::prepare_activations(sources, x_row, backend);
  KernelScope scope(detail::pass_name(sources), backend);
  pool_->parallel_for(out.size(), [&](Range range, std::size_t) { detail::dot_rows(sources, x, range, out); });
  scope.set_work(out.size(), 2.0 * static_cast<double>(out.size() * hidden()), detail::pass_bytes(sources, hidden()));
}

FusedGateUpOp::FusedGateUpOp(WeightMatrix gate, WeightMatrix up, ThreadPool& pool, std::string label)
    : OpIdentity(BrickId::GateUpProjection, std::move(label)), gate_(gate), up_(up), pool_(&pool) {
  validate(gate_, "FusedGateUpOp gate");
  validate(up_, "FusedGateUpOp up");
  if (rows(gate_) != rows(up_) || cols(gate_) != cols(up_)) {
    throw InvalidArgument(fmt::format("FusedGateUpOp: gate is {}x{} but up is {}x{}; they must match",
                                      rows(gate_), cols(gate_), rows(up_), cols(up_)));
  }
}

OpCost FusedGateUpOp::cost(const Input& input) const noexcept {
  const auto h = static_cast<double>(hidden());
  const auto outputs = static_cast<double>(rows(gate_));
  const auto t = static_cast<double>(input.tokens);
  // Two dot products per output, then silu (negate, exp, add, divide) and the product.
  constexpr double kActivationFlops = 5.0;
  return OpCost{input.tokens, (4.0 * outputs * h + detail::kQuantizeFlopsPerValue * h + kActivationFlops * outputs) * t,
                bytes(gate_) + bytes(up_) + (4.0 * h + 4.0 * outputs) * t};
}

void FusedGateUpOp::run(const Input& input, std::span<float> out, Backend backend) const {
  const std::size_t width = rows(gate_);
  detail::require_batch(name(), input.tokens, hidden(), input.x.size(), width, out.size());
  if (input.tokens == 1) {
    run_token(input.x, out, backend);
  } else {
    run_batch(input.x, input.tokens, out, backend);
  }
}

void FusedGateUpOp::run_batch(std::span<const float> x, std::size_t tokens, std::span<float> out,
                              Backend backend) const {
  const std::array<detail::RowSource, 2> sources = {detail::row_source(gate_, backend),
                                                    detail::row_source(up_, backend)};
  const std::size_t width = rows(gate_);
  detail::Activations xq = detail::prepare_activations(sources, x, backend);
  xq.cols = hidden();
  KernelScope scope(detail::gemm_pass_name(sources, tokens), backend);
  scope.set_work(width * tokens, 4.0 * static_cast<double>(width * hidden() * tokens),
                 detail::pass_bytes(sources, hidden(), tokens));
  pool_->parallel_for(width, [&](Range range, std::size_t) {
    // A tile of rows at a time: the gate rows' dot products straight into `out`, the up rows' into
    // the thread's buffer, then out = silu(gate) * up over the tile. Tiles of 1024 rows keep the
    // buffer at 4 KiB per token while each kernel call covers enough rows to repay its set-up.
    constexpr std::size_t kTileRows = 1024;
    thread_local std::vector<float> up_values;
    up_values.resize(tokens * std::min(kTileRows, range.size()));
    for (std::size_t row = range.begin; row < range.end; row += kTileRows) {
      const std::size_t count = std::min(kTileRows, range.end - row);
      sources[0].tokens_call(sources[0], row, count, xq, tokens, out.data() + row, width);
      sources[1].tokens_call(sources[1], row, count, xq, tokens, up_values.data(), count);
      for (std::size_t t = 0; t < tokens; ++t) {
        float* const gate = out.data() + t * width + row;
        const float* const up = up_values.data() + t * count;
        for (std::size_t i = 0; i < count; ++i) gate[i] = silu(gate[i]) * up[i];
      }
    }
  });
}

void FusedGateUpOp::run_token(std::span<const float> x_row, std::span<float> out, Backend backend) const {
  const std::array<detail::RowSource, 2> sources = {detail::row_source(gate_, backend),
                                                    detail::row_source(up_, backend)};
  const detail::RowSource& gate = sources[0];
  const detail::RowSource& up = sources[1];
  const detail::Activations xq = detail::prepare_activations(sources, x_row, backend);
  KernelScope scope(detail::pass_name(sources), backend);
  scope.set_work(out.size(), 4.0 * static_cast<double>(out.size() * hidden()), detail::pass_bytes(sources, hidden()));
  pool_->parallel_for(out.size(), [&](Range range, std::size_t) {
    if (detail::row_walk() == detail::RowWalk::OneAfterAnother) {
      gate_up_in_tiles(gate, up, xq, range, out);
    } else {
      gate_up_in_four_runs(gate, up, xq, range, out);
    }
  });
}

}  // namespace brick::quant
