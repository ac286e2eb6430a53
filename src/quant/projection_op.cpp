#include "brick/quant/projection_op.hpp"

#include <fmt/format.h>

#include "brick/core/error.hpp"
#include "brick/quant/matvec.hpp"

namespace brick::quant {

ProjectionOp::ProjectionOp(BrickId id, std::string label, WeightMatrix w, ThreadPool& pool)
    : OpIdentity(id, std::move(label)), w_(w), pool_(&pool) {
  validate(w_, name());
}

OpCost ProjectionOp::cost(const Input&) const noexcept {
  const auto r = static_cast<double>(w_.rows());
  const auto c = static_cast<double>(w_.cols());
  return OpCost{1, 2.0 * r * c, bytes(w_) + 4.0 * c + 4.0 * r};
}

void ProjectionOp::run(const Input& input, std::span<float> out, Backend backend) const {
  matvec(w_, input.x, out, *pool_, backend);
}

EmbeddingOp::EmbeddingOp(WeightMatrix table, std::string label)
    : OpIdentity(BrickId::Embedding, std::move(label)), table_(table) {
  validate(table_, name());
}

OpCost EmbeddingOp::cost(const Input&) const noexcept {
  const auto c = static_cast<double>(table_.cols());
  return OpCost{1, c, static_cast<double>(table_.row_bytes()) + 4.0 * c};
}

void EmbeddingOp::run(const Input& input, std::span<float> out, Backend) const {
  if (input.token < 0 || static_cast<std::size_t>(input.token) >= table_.rows()) {
    throw InvalidArgument(fmt::format("{}: token id {} is outside the {} rows of the table", name(), input.token,
                                      table_.rows()));
  }
  dequantize_row(table_, static_cast<std::size_t>(input.token), out);
}

}  // namespace brick::quant
