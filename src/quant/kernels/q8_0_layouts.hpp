#pragma once
// Block b of a row of Q8_0 blocks in either layout, plain (BlockQ80) or grouped (BlockQ80Group, 16
// blocks to a group), for the kernels that walk both with one body: its quants, its d and row r of
// a matrix of rows of `blocks` blocks (a grouped row's blocks counted as Q8_0 blocks). Everything
// here is in an anonymous namespace so that each translation unit keeps its own copy.
#include <cstddef>
#include <cstdint>

#include "brick/quant/q8_0.hpp"
#include "brick/quant/weight_layout.hpp"

namespace brick::quant::kernels {
namespace {

inline const std::int8_t* quants_of(const BlockQ80* row, std::size_t b) { return row[b].qs; }
inline const std::int8_t* quants_of(const BlockQ80Group* row, std::size_t b) {
  return row[b / BlockQ80Group::kBlocks].qs + kQ80BlockSize * (b % BlockQ80Group::kBlocks);
}

inline const fp16_t& scale_of(const BlockQ80* row, std::size_t b) { return row[b].d; }
inline const fp16_t& scale_of(const BlockQ80Group* row, std::size_t b) {
  return row[b / BlockQ80Group::kBlocks].d[b % BlockQ80Group::kBlocks];
}

// Row `row` from its block b on, b a multiple of 16 (a grouped row's group boundary), so that
// blocks counted from there are plain offsets the compiler folds.
inline const BlockQ80* from_group(const BlockQ80* row, std::size_t b) { return row + b; }
inline const BlockQ80Group* from_group(const BlockQ80Group* row, std::size_t b) {
  return row + b / BlockQ80Group::kBlocks;
}

inline const BlockQ80* row_at(const BlockQ80* w, std::size_t r, std::size_t blocks) { return w + r * blocks; }
inline const BlockQ80Group* row_at(const BlockQ80Group* w, std::size_t r, std::size_t blocks) {
  return w + r * (blocks / BlockQ80Group::kBlocks);
}

}  // namespace
}  // namespace brick::quant::kernels
