#include "brick/quant/projection_op.hpp"

#include <fmt/format.h>

#include "brick/core/error.hpp"
#include "brick/core/kernel_recorder.hpp"
#include "brick/quant/matvec.hpp"
#include "quant/matvec_rows.hpp"

namespace brick::quant {

ProjectionOp::ProjectionOp(BrickId id, std::string label, WeightMatrix w, ThreadPool& pool)
    : OpIdentity(id, std::move(label)), w_(w), pool_(&pool) {
  validate(w_, name());
}

OpCost ProjectionOp::cost(const Input& input) const noexcept {
  const auto r = static_cast<double>(w_.rows());
  const auto c = static_cast<double>(w_.cols());
  const auto t = static_cast<double>(input.tokens);
  return OpCost{input.tokens, 2.0 * r * c * t, bytes(w_) + (4.0 * c + 4.0 * r) * t};
}

void ProjectionOp::run(const Input& input, std::span<float> out, Backend backend) const {
  detail::require_batch(name(), input.tokens, w_.cols(), input.x.size(), w_.rows(), out.size());
  if (input.tokens == 1) {
    matvec(w_, input.x, out, *pool_, backend);
  } else {
    const detail::RowSource source = detail::row_source(w_, backend);
    detail::gemm(std::span(&source, 1), input.x, input.tokens, out, *pool_, backend);
  }
}

EmbeddingOp::EmbeddingOp(WeightMatrix table, std::string label)
    : OpIdentity(BrickId::Embedding, std::move(label)), table_(table) {
  validate(table_, name());
}

OpCost EmbeddingOp::cost(const Input& input) const noexcept {
  const auto c = static_cast<double>(table_.cols());
  const auto t = static_cast<double>(input.tokens.size());
  return OpCost{input.tokens.size(), c * t, (static_cast<double>(table_.row_bytes()) + 4.0 * c) * t};
}

void EmbeddingOp::run(const Input& input, std::span<float> out, Backend) const {
  const std::size_t width = table_.cols();
  if (out.size() != output_size(input)) {
    throw InvalidArgument(fmt::format("{}: {} tokens need {} outputs; got {}", name(), input.tokens.size(),
                                      output_size(input), out.size()));
  }
  // The lookup is the dequantization of its rows: the whole cost of the op.
  KernelScope scope("dequantize_row", Backend::Scalar);
  const OpCost work = cost(input);
  scope.set_work(out.size(), work.flops, work.bytes);
  for (std::size_t t = 0; t < input.tokens.size(); ++t) {
    const std::int32_t token = input.tokens[t];
    if (token < 0 || static_cast<std::size_t>(token) >= table_.rows()) {
      throw InvalidArgument(
          fmt::format("{}: token id {} is outside the {} rows of the table", name(), token, table_.rows()));
    }
    dequantize_row(table_, static_cast<std::size_t>(token), out.subspan(t * width, width));
  }
}

}  // namespace brick::quant
