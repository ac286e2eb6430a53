// The sub-block interleaved layout of Q4_K and Q5_K blocks (brick/quant/weight_layout.hpp).
#include "brick/quant/weight_layout.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "brick/core/error.hpp"
#include "brick/quant/weight_matrix.hpp"
#include "quant/dot_kernel_table.hpp"
#include "quant/kquant_scale_min.hpp"

namespace brick::quant {
namespace {

void require_same_size(const char* function, std::size_t in, std::size_t out) {
  if (in != out) throw InvalidArgument(fmt::format("{}: {} blocks in but room for {}", function, in, out));
}

// The 4-bit quant at position `at` of a block's 256. Plain: values 64c..64c+31 in the low nibbles
// of bytes 32c.., the next 32 in the high ones. Interleaved: vector k's byte p in byte 32 * (k / 2)
// + p, nibble k % 2. Both are the same function of the position.
std::uint8_t nibble_at(const std::uint8_t* qs, std::size_t at) noexcept {
  const std::size_t chunk = at / 64;
  const std::uint8_t packed = qs[32 * chunk + at % 32];
  return at % 64 < 32 ? (packed & 0xF) : (packed >> 4);
}

void set_nibble(std::uint8_t* qs, std::size_t at, std::uint8_t value) noexcept {
  std::uint8_t& packed = qs[32 * (at / 64) + at % 32];
  packed = at % 64 < 32 ? static_cast<std::uint8_t>((packed & 0xF0) | value)
                        : static_cast<std::uint8_t>((packed & 0x0F) | (value << 4));
}

// The fifth bits: plain qh[v % 32] bit v / 32; interleaved qh[p] bit k at position 32k + p. Both are
// bit at / 32 of byte at % 32.
bool bit_at(const std::uint8_t* qh, std::size_t at) noexcept { return ((qh[at % 32] >> (at / 32)) & 1) != 0; }
void set_bit(std::uint8_t* qh, std::size_t at, bool bit) noexcept {
  if (bit) qh[at % 32] = static_cast<std::uint8_t>(qh[at % 32] | (1u << (at / 32)));
}

template <class Plain, class Interleaved>
void interleave_block(const Plain& in, Interleaved& out) {
  out.d = in.d;
  out.dmin = in.dmin;
  for (int j = 0; j < detail::kScaleMinSubBlocks; ++j) {
    const detail::ScaleMin sm = detail::unpack_scale_min(in.scales, j);
    out.scales[j] = sm.scale;
    out.mins[j] = sm.min;
  }
  std::memset(out.qs, 0, sizeof out.qs);
  if constexpr (requires { out.qh; }) std::memset(out.qh, 0, sizeof out.qh);
  for (std::size_t v = 0; v < kBlockSize; ++v) {
    const std::size_t at = interleaved_position(v);
    set_nibble(out.qs, at, nibble_at(in.qs, v));
    if constexpr (requires { out.qh; }) set_bit(out.qh, at, bit_at(in.qh, v));
  }
}

template <class Interleaved, class Plain>
void deinterleave_block(const Interleaved& in, Plain& out) {
  out.d = in.d;
  out.dmin = in.dmin;
  std::memset(out.scales, 0, sizeof out.scales);
  for (int j = 0; j < detail::kScaleMinSubBlocks; ++j) {
    detail::pack_scale_min(out.scales, j, {in.scales[j], in.mins[j]});
  }
  std::memset(out.qs, 0, sizeof out.qs);
  if constexpr (requires { out.qh; }) std::memset(out.qh, 0, sizeof out.qh);
  for (std::size_t v = 0; v < kBlockSize; ++v) {
    const std::size_t at = interleaved_position(v);
    set_nibble(out.qs, v, nibble_at(in.qs, at));
    if constexpr (requires { out.qh; }) set_bit(out.qh, v, bit_at(in.qh, at));
  }
}

template <class In, class Out, class Convert>
void convert_blocks(const char* function, std::span<const In> in, std::span<Out> out, Convert convert) {
  require_same_size(function, in.size(), out.size());
  for (std::size_t b = 0; b < in.size(); ++b) convert(in[b], out[b]);
}

// Converts the blocks of `in` (of type In) into `out` (of type Out).
template <class In, class Out>
void convert_bytes(std::span<const std::byte> in, std::span<std::byte> out, void (*convert)(std::span<const In>, std::span<Out>)) {
  convert({reinterpret_cast<const In*>(in.data()), in.size() / sizeof(In)},
          {reinterpret_cast<Out*>(out.data()), out.size() / sizeof(Out)});
}

}  // namespace

std::string_view name(WeightLayout layout) noexcept {
  switch (layout) {
    case WeightLayout::Plain: return "plain";
    case WeightLayout::SubBlockInterleaved: return "sub-block interleaved";
  }
  return "unknown";
}

std::optional<std::size_t> block_bytes(TensorType type, WeightLayout layout) noexcept {
  if (layout == WeightLayout::Plain) return traits(type).block_bytes;
  if (type == TensorType::Q4_K) return sizeof(BlockQ4KInterleaved);
  if (type == TensorType::Q5_K) return sizeof(BlockQ5KInterleaved);
  return std::nullopt;
}

std::optional<std::size_t> row_bytes(TensorType type, WeightLayout layout, std::size_t values) noexcept {
  const std::optional<std::size_t> plain = row_bytes(type, values);
  const std::optional<std::size_t> block = block_bytes(type, layout);
  if (!plain || !block) return std::nullopt;
  return *plain / traits(type).block_bytes * *block;
}

void interleave_q4k(std::span<const BlockQ4K> in, std::span<BlockQ4KInterleaved> out) {
  convert_blocks("interleave_q4k", in, out, interleave_block<BlockQ4K, BlockQ4KInterleaved>);
}

void interleave_q5k(std::span<const BlockQ5K> in, std::span<BlockQ5KInterleaved> out) {
  convert_blocks("interleave_q5k", in, out, interleave_block<BlockQ5K, BlockQ5KInterleaved>);
}

void deinterleave_q4k(std::span<const BlockQ4KInterleaved> in, std::span<BlockQ4K> out) {
  convert_blocks("deinterleave_q4k", in, out, deinterleave_block<BlockQ4KInterleaved, BlockQ4K>);
}

void deinterleave_q5k(std::span<const BlockQ5KInterleaved> in, std::span<BlockQ5K> out) {
  convert_blocks("deinterleave_q5k", in, out, deinterleave_block<BlockQ5KInterleaved, BlockQ5K>);
}

void interleave_q8k(std::span<const BlockQ8K> in, std::span<BlockQ8K> out) {
  require_same_size("interleave_q8k", in.size(), out.size());
  for (std::size_t b = 0; b < in.size(); ++b) {
    std::int8_t plain[kBlockSize];
    std::memcpy(plain, in[b].qs, sizeof plain);
    if (&in[b] != &out[b]) out[b] = in[b];
    for (std::size_t v = 0; v < kBlockSize; ++v) out[b].qs[interleaved_position(v)] = plain[v];
  }
}

}  // namespace brick::quant

namespace brick::quant {

WeightLayout preferred_layout(TensorType type, Backend backend) {
  if (resolve(backend) != Backend::Avx2) return WeightLayout::Plain;
  return detail::with_format(type, WeightLayout::SubBlockInterleaved, [](auto) {}) ? WeightLayout::SubBlockInterleaved
                                                                                  : WeightLayout::Plain;
}

RepackedMatrix::RepackedMatrix(const WeightMatrix& w, WeightLayout layout) {
  validate(w, "RepackedMatrix");
  const std::optional<std::size_t> row = row_bytes(w.type(), layout, w.cols());
  if (!row) {
    throw InvalidArgument(fmt::format("RepackedMatrix: {} weights have no {} layout", name(w.type()), name(layout)));
  }
  bytes_.resize(*row * w.rows());
  const bool q4k = w.type() == TensorType::Q4_K;
  if (layout == w.layout()) {
    std::copy(w.data().begin(), w.data().end(), bytes_.begin());
  } else if (layout == WeightLayout::SubBlockInterleaved) {
    q4k ? convert_bytes(w.data(), bytes_, &interleave_q4k) : convert_bytes(w.data(), bytes_, &interleave_q5k);
  } else {
    q4k ? convert_bytes(w.data(), bytes_, &deinterleave_q4k) : convert_bytes(w.data(), bytes_, &deinterleave_q5k);
  }
  matrix_ = WeightMatrix(w.type(), bytes_, w.rows(), w.cols(), layout);
}

}  // namespace brick::quant
