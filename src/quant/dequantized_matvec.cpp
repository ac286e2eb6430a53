#include "brick/quant/dequantized_matvec.hpp"

#include <fmt/format.h>

#include <vector>

#include "brick/core/error.hpp"

namespace brick::quant {

void dequantized_matvec(const WeightMatrix& w, std::span<const float> x, std::span<float> y,
                        ThreadPool& pool) {
  if (x.size() != w.cols() || y.size() != w.rows()) {
    throw InvalidArgument(fmt::format(
        "dequantized_matvec: x of {} and y of {} values for a {}x{} matrix; expected {} and {}",
        x.size(), y.size(), w.rows(), w.cols(), w.cols(), w.rows()));
  }
  pool.parallel_for(w.rows(), [&](Range rows, std::size_t) {
    thread_local std::vector<float> row;
    row.resize(w.cols());
    for (std::size_t r = rows.begin; r < rows.end; ++r) {
      dequantize_row(w, r, row);
      double sum = 0.0;
      for (std::size_t c = 0; c < row.size(); ++c) {
        sum += static_cast<double>(row[c]) * static_cast<double>(x[c]);
      }
      y[r] = static_cast<float>(sum);
    }
  });
}

}  // namespace brick::quant
