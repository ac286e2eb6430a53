#include "brick/quant/dequantized_matvec.hpp"

#include <fmt/format.h>

#include <array>
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
      // Eight sums side by side, so that the products do not wait on one another.
      std::array<double, 8> sums{};
      const std::size_t whole = row.size() - row.size() % sums.size();
      for (std::size_t c = 0; c < whole; c += sums.size()) {
        for (std::size_t k = 0; k < sums.size(); ++k) {
          sums[k] += static_cast<double>(row[c + k]) * static_cast<double>(x[c + k]);
        }
      }
      for (std::size_t c = whole; c < row.size(); ++c) {
        sums[c - whole] += static_cast<double>(row[c]) * static_cast<double>(x[c]);
      }
      y[r] = static_cast<float>(((sums[0] + sums[1]) + (sums[2] + sums[3])) +
                                ((sums[4] + sums[5]) + (sums[6] + sums[7])));
    }
  });
}

}  // namespace brick::quant
