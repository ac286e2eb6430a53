// The repacked weight layouts (brick/quant/weight_layout.hpp): Q4_K, Q5_K and Q6_K blocks
// sub-block interleaved, Q8_0 blocks in groups.
#include "brick/quant/weight_layout.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "brick/core/error.hpp"
#include "brick/quant/weight_matrix.hpp"
#include "quant/dot_kernel_table.hpp"
#include "quant/kquant_scale_min.hpp"
#include "quant/q5k_quants.hpp"
#include "quant/q6k_quants.hpp"

namespace brick::quant {
namespace {

void require_same_size(const char* function, std::size_t in, std::size_t out) {
  if (in != out) throw InvalidArgument(fmt::format("{}: {} blocks in but room for {}", function, in, out));
}

// The quants of a Q4_K or plain Q5_K block, one byte each in position order. Both layouts of Q4_K
// store position `at` in the low (at % 64 < 32) or high nibble of qs[32 * (at / 64) + at % 32]
// (plain: value v at position v; interleaved: vector k's byte p at position 32k + p), plain Q5_K
// too, with its fifth bit in bit at / 32 of qh[at % 32].
template <class Block>
  requires requires(Block b) { b.dmin; }
void unpack_quants(const Block& block, std::uint8_t (&q)[kBlockSize]) noexcept {
  for (std::size_t chunk = 0; chunk < 4; ++chunk) {
    for (std::size_t p = 0; p < 32; ++p) {
      const std::uint8_t packed = block.qs[32 * chunk + p];
      q[64 * chunk + p] = packed & 0xF;
      q[64 * chunk + 32 + p] = static_cast<std::uint8_t>(packed >> 4);
    }
  }
  if constexpr (requires { block.qh; }) {
    for (std::size_t at = 0; at < kBlockSize; ++at) {
      q[at] = static_cast<std::uint8_t>(q[at] | (((block.qh[at % 32] >> (at / 32)) & 1) << 4));
    }
  }
}

template <class Block>
  requires requires(Block b) { b.dmin; }
void pack_quants(const std::uint8_t (&q)[kBlockSize], Block& block) noexcept {
  for (std::size_t chunk = 0; chunk < 4; ++chunk) {
    for (std::size_t p = 0; p < 32; ++p) {
      block.qs[32 * chunk + p] =
          static_cast<std::uint8_t>((q[64 * chunk + p] & 0xF) | ((q[64 * chunk + 32 + p] & 0xF) << 4));
    }
  }
  if constexpr (requires { block.qh; }) {
    for (std::size_t p = 0; p < 32; ++p) {
      std::uint8_t bits = 0;
      for (std::size_t k = 0; k < 8; ++k) bits = static_cast<std::uint8_t>(bits | (((q[32 * k + p] >> 4) & 1) << k));
      block.qh[p] = bits;
    }
  }
}

// An interleaved Q5_K block's quants (0..31) in position order (q5k_quants.hpp), and back.
void unpack_quants(const BlockQ5KInterleaved& block, std::uint8_t (&q)[kBlockSize]) noexcept {
  for (std::size_t at = 0; at < kBlockSize; ++at) q[at] = detail::q5k_quant(block, at);
}

void pack_quants(const std::uint8_t (&q)[kBlockSize], BlockQ5KInterleaved& block) noexcept {
  std::memset(block.qs + 128, 0, 32);
  for (std::size_t c = 0; c < 4; ++c) {
    for (std::size_t p = 0; p < 32; ++p) {
      const std::uint8_t odd = q[64 * c + 32 + p];
      block.qs[32 * c + p] = static_cast<std::uint8_t>(q[64 * c + p] | (odd >> 2) << 5);
      block.qs[128 + p] = static_cast<std::uint8_t>(block.qs[128 + p] | (odd & 3) << (2 * c));
    }
  }
}

// Q6_K's quants (0..63) in position order, in either layout (q6k_quants.hpp).
template <class Block>
  requires std::is_same_v<Block, BlockQ6K> || std::is_same_v<Block, BlockQ6KInterleaved>
void unpack_quants(const Block& block, std::uint8_t (&q)[kBlockSize]) noexcept {
  for (std::size_t at = 0; at < kBlockSize; ++at) q[at] = detail::q6k_quant(block, at);
}

// Their inverses: plain as q6k_quant(BlockQ6K) reads them, interleaved as
// q6k_quant(BlockQ6KInterleaved) does.
void pack_quants(const std::uint8_t (&q)[kBlockSize], BlockQ6K& block) noexcept {
  for (std::size_t half = 0; half < 2; ++half) {
    std::uint8_t* ql = block.ql + 64 * half;
    std::uint8_t* qh = block.qh + 32 * half;
    const std::uint8_t* in = q + 128 * half;
    for (std::size_t lane = 0; lane < 32; ++lane) {
      ql[lane] = static_cast<std::uint8_t>((in[lane] & 0xF) | ((in[64 + lane] & 0xF) << 4));
      ql[32 + lane] = static_cast<std::uint8_t>((in[32 + lane] & 0xF) | ((in[96 + lane] & 0xF) << 4));
      qh[lane] = static_cast<std::uint8_t>((in[lane] >> 4) | ((in[32 + lane] >> 4) << 2) | ((in[64 + lane] >> 4) << 4) |
                                           ((in[96 + lane] >> 4) << 6));
    }
  }
}

void pack_quants(const std::uint8_t (&q)[kBlockSize], BlockQ6KInterleaved& block) noexcept {
  for (std::size_t half = 0; half < 2; ++half) {
    std::uint8_t* packed = block.qs + 96 * half;
    const std::uint8_t* in = q + 128 * half;
    for (std::size_t lane = 0; lane < 32; ++lane) {
      for (std::size_t k = 0; k < 3; ++k) {
        const int top = (in[96 + lane] >> (4 - 2 * k)) & 3;
        packed[32 * k + lane] = static_cast<std::uint8_t>(in[32 * k + lane] | top << 6);
      }
    }
  }
}

// Quants in the other layout's position order: interleaved_position() keeps each run of four
// values together, so it is a transpose of 8 x 8 runs of four bytes (and its own inverse).
void permute_positions(const std::uint8_t (&in)[kBlockSize], std::uint8_t (&out)[kBlockSize]) noexcept {
  for (std::size_t s = 0; s < 8; ++s) {
    for (std::size_t k = 0; k < 8; ++k) std::memcpy(out + 32 * k + 4 * s, in + 32 * s + 4 * k, 4);
  }
}

// A Q8_K block into the other layout (BlockQ8K <-> BlockQ8KInterleaved).
template <class From, class To>
void permute_q8k_block(const From& in, To& out) noexcept {
  std::uint8_t plain[kBlockSize];
  std::uint8_t permuted[kBlockSize];
  std::memcpy(plain, in.qs, sizeof plain);
  permute_positions(plain, permuted);
  std::memcpy(out.qs, permuted, sizeof permuted);
  std::memcpy(out.bsums, in.bsums, sizeof out.bsums);
  out.d = in.d;
}

template <class From, class To>
void permute_quants(const From& in, To& out) noexcept {
  std::uint8_t q[kBlockSize];
  std::uint8_t permuted[kBlockSize];
  unpack_quants(in, q);
  permute_positions(q, permuted);
  pack_quants(permuted, out);
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
  permute_quants(in, out);
}

void interleave_q6k_block(const BlockQ6K& in, BlockQ6KInterleaved& out) {
  std::memcpy(out.scales, in.scales, sizeof out.scales);
  out.d = in.d;
  permute_quants(in, out);
}

void deinterleave_q6k_block(const BlockQ6KInterleaved& in, BlockQ6K& out) {
  std::memcpy(out.scales, in.scales, sizeof out.scales);
  out.d = in.d;
  permute_quants(in, out);
}

template <class Interleaved, class Plain>
void deinterleave_block(const Interleaved& in, Plain& out) {
  out.d = in.d;
  out.dmin = in.dmin;
  std::memset(out.scales, 0, sizeof out.scales);
  for (int j = 0; j < detail::kScaleMinSubBlocks; ++j) {
    detail::pack_scale_min(out.scales, j, {in.scales[j], in.mins[j]});
  }
  permute_quants(in, out);
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
    case WeightLayout::GroupedBlocks: return "grouped blocks";
  }
  return "unknown";
}

std::optional<std::size_t> block_bytes(TensorType type, WeightLayout layout) noexcept {
  switch (layout) {
    case WeightLayout::Plain: return traits(type).block_bytes;
    case WeightLayout::SubBlockInterleaved:
      if (type == TensorType::Q4_K) return sizeof(BlockQ4KInterleaved);
      if (type == TensorType::Q5_K) return sizeof(BlockQ5KInterleaved);
      if (type == TensorType::Q6_K) return sizeof(BlockQ6KInterleaved);
      break;
    case WeightLayout::GroupedBlocks:
      if (type == TensorType::Q8_0) return sizeof(BlockQ80Group);
      break;
  }
  return std::nullopt;
}

std::optional<std::size_t> block_values(TensorType type, WeightLayout layout) noexcept {
  if (!block_bytes(type, layout)) return std::nullopt;
  const std::size_t plain = traits(type).block_values;
  return layout == WeightLayout::GroupedBlocks ? plain * BlockQ80Group::kBlocks : plain;
}

std::optional<std::size_t> row_bytes(TensorType type, WeightLayout layout, std::size_t values) noexcept {
  const std::optional<std::size_t> block = block_bytes(type, layout);
  if (!block || !row_bytes(type, values) || values % *block_values(type, layout) != 0) return std::nullopt;
  return values / *block_values(type, layout) * *block;
}

void interleave_q4k(std::span<const BlockQ4K> in, std::span<BlockQ4KInterleaved> out) {
  convert_blocks("interleave_q4k", in, out, interleave_block<BlockQ4K, BlockQ4KInterleaved>);
}

void interleave_q5k(std::span<const BlockQ5K> in, std::span<BlockQ5KInterleaved> out) {
  convert_blocks("interleave_q5k", in, out, interleave_block<BlockQ5K, BlockQ5KInterleaved>);
}

void interleave_q6k(std::span<const BlockQ6K> in, std::span<BlockQ6KInterleaved> out) {
  convert_blocks("interleave_q6k", in, out, interleave_q6k_block);
}

void deinterleave_q6k(std::span<const BlockQ6KInterleaved> in, std::span<BlockQ6K> out) {
  convert_blocks("deinterleave_q6k", in, out, deinterleave_q6k_block);
}

void deinterleave_q4k(std::span<const BlockQ4KInterleaved> in, std::span<BlockQ4K> out) {
  convert_blocks("deinterleave_q4k", in, out, deinterleave_block<BlockQ4KInterleaved, BlockQ4K>);
}

void deinterleave_q5k(std::span<const BlockQ5KInterleaved> in, std::span<BlockQ5K> out) {
  convert_blocks("deinterleave_q5k", in, out, deinterleave_block<BlockQ5KInterleaved, BlockQ5K>);
}

void group_q8_0(std::span<const BlockQ80> in, std::span<BlockQ80Group> out) {
  require_same_size("group_q8_0", in.size(), BlockQ80Group::kBlocks * out.size());
  for (std::size_t b = 0; b < in.size(); ++b) {
    BlockQ80Group& group = out[b / BlockQ80Group::kBlocks];
    const std::size_t i = b % BlockQ80Group::kBlocks;
    group.d[i] = in[b].d;
    std::memcpy(group.qs + kQ80BlockSize * i, in[b].qs, kQ80BlockSize);
  }
}

void ungroup_q8_0(std::span<const BlockQ80Group> in, std::span<BlockQ80> out) {
  require_same_size("ungroup_q8_0", BlockQ80Group::kBlocks * in.size(), out.size());
  for (std::size_t b = 0; b < out.size(); ++b) {
    const BlockQ80Group& group = in[b / BlockQ80Group::kBlocks];
    const std::size_t i = b % BlockQ80Group::kBlocks;
    out[b].d = group.d[i];
    std::memcpy(out[b].qs, group.qs + kQ80BlockSize * i, kQ80BlockSize);
  }
}

void interleave_q8k(std::span<const BlockQ8K> in, std::span<BlockQ8KInterleaved> out) {
  require_same_size("interleave_q8k", in.size(), out.size());
  for (std::size_t b = 0; b < in.size(); ++b) permute_q8k_block(in[b], out[b]);
}

void deinterleave_q8k(std::span<const BlockQ8KInterleaved> in, std::span<BlockQ8K> out) {
  require_same_size("deinterleave_q8k", in.size(), out.size());
  for (std::size_t b = 0; b < in.size(); ++b) permute_q8k_block(in[b], out[b]);
}

}  // namespace brick::quant

namespace brick::quant {

WeightLayout preferred_layout(TensorType type, Backend backend) {
  const Backend resolved = resolve(backend);
  if (resolved == Backend::Scalar) return WeightLayout::Plain;
  // A repacked layout whose format has a line for the instruction set the plain one runs here: the
  // same arithmetic, so the same bits. On AVX-512 the repacked formats' F/BW lines are their AVX2
  // kernels built for it, which the plain AVX-512 kernels outrun, so only a line of an extension
  // (grouped Q8_0 with VNNI) counts there.
  std::optional<detail::Isa> plain;
  detail::with_format(type, [&](auto format) { plain = detail::select_kernel<decltype(format)>(backend).isa; });
  if (resolved == Backend::Avx512 && plain == detail::Isa::Avx512) return WeightLayout::Plain;
  for (const WeightLayout layout : {WeightLayout::SubBlockInterleaved, WeightLayout::GroupedBlocks}) {
    bool runs_here = false;
    detail::with_format(type, layout, [&](auto format) { runs_here = plain && detail::has_kernel<decltype(format)>(*plain); });
    if (runs_here) return layout;
  }
  return WeightLayout::Plain;
}

RepackedMatrix::RepackedMatrix(const WeightMatrix& w, WeightLayout layout, ThreadPool* pool) {
  validate(w, "RepackedMatrix");
  if (!block_bytes(w.type(), layout)) {
    throw InvalidArgument(fmt::format("RepackedMatrix: {} weights have no {} layout", name(w.type()), name(layout)));
  }
  const std::optional<std::size_t> row = row_bytes(w.type(), layout, w.cols());
  if (!row) {
    throw InvalidArgument(fmt::format("RepackedMatrix: rows of {} values are not whole {}-value blocks of {} {}", w.cols(),
                                      *block_values(w.type(), layout), name(w.type()), name(layout)));
  }
  lines_.resize((*row * w.rows() + sizeof(CacheLine) - 1) / sizeof(CacheLine));
  const std::span<std::byte> bytes(reinterpret_cast<std::byte*>(lines_.data()), *row * w.rows());
  // Rows [range.begin, range.end) of w into bytes_.
  const auto repack_rows = [&](Range range) {
    const std::span<const std::byte> in = w.data().subspan(range.begin * w.row_bytes(), range.size() * w.row_bytes());
    const std::span<std::byte> out = bytes.subspan(range.begin * *row, range.size() * *row);
    const auto convert = [&](auto to_repacked, auto to_plain) {
      if (layout == WeightLayout::Plain) {
        convert_bytes(in, out, to_plain);
      } else {
        convert_bytes(in, out, to_repacked);
      }
    };
    if (layout == w.layout()) {
      std::copy(in.begin(), in.end(), out.begin());
    } else if (w.type() == TensorType::Q4_K) {
      convert(&interleave_q4k, &deinterleave_q4k);
    } else if (w.type() == TensorType::Q5_K) {
      convert(&interleave_q5k, &deinterleave_q5k);
    } else if (w.type() == TensorType::Q6_K) {
      convert(&interleave_q6k, &deinterleave_q6k);
    } else {
      convert(&group_q8_0, &ungroup_q8_0);
    }
  };
  if (pool != nullptr) {
    pool->parallel_for(w.rows(), [&](Range range, std::size_t) { repack_rows(range); });
  } else {
    repack_rows({0, w.rows()});
  }
  matrix_ = WeightMatrix(w.type(), bytes, w.rows(), w.cols(), layout);
}

}  // namespace brick::quant
