#pragma once
// How the blocks of a weight matrix lie in memory. A GGUF file stores every type in ggml's layout
// (Plain). The AVX2 kernels run faster on blocks repacked once at load time, an explicit choice of
// the matrix (WeightMatrix::layout()): Q4_K, Q5_K and Q6_K in a sub-block interleaved layout, Q8_0
// in groups of blocks (GroupedBlocks, at the end).
//
// SubBlockInterleaved:
//
// - The values of a block are the same, and so is every dot product: the integer sums are the
//   same integers and the float operations on them the same, so a kernel gives the same bits on a
//   repacked matrix as on the plain one.
// - Each 32 quants that one vector of a kernel holds are four consecutive values of each of the 8
//   runs of 32 values (vector k, bytes 4s..4s+3: values 32s + 4k .. 32s + 4k + 3), so that the
//   16-bit lanes of a vector's products each belong to one sub-block: the products of several
//   vectors add up as 16-bit sums and meet a vector of scales in one multiply, where the plain
//   layout needs one per sub-block. Activations are permuted the same way, once per mat-vec
//   (interleave_q8k), into 32-byte aligned blocks (BlockQ8KInterleaved).
// - Q4_K and Q5_K store their 6-bit scales and mins one byte each (16 bytes where Plain packs them
//   in 12), so a block takes 4 bytes more: Q4_K 148 bytes per 256 values (2.8% more), Q5_K 180
//   (2.3%). Q6_K blocks keep their size (210 bytes) and their scales, with the 6-bit quants packed
//   three vectors to four (below): a half of 128 unpacks in 11 vector operations where ggml's ql/qh
//   take 17. Q5_K's 5-bit quants are packed five vectors to eight (below): two vectors unpack in 6
//   operations where nibbles and a bit plane took 10.
//
// An interleaved block stores the quant at position interleaved_position(v) where the plain block
// stores value v's: for Q4_K, quant byte 32c + p holds, in its low and high nibble, byte p of
// vectors 2c and 2c + 1. For Q5_K, byte 32c + p (c < 4) holds byte p of vector 2c in bits 0..4 and
// bits 2..4 of byte p of vector 2c + 1 in bits 5..7, and byte 128 + p bits 0..1 of byte p of vector
// 2c + 1 in its bits 2c..2c + 1. For Q6_K, each half h of 128 positions is the 96 bytes
// qs[96h ..]: byte 32k + p (k = 0, 1, 2) holds byte p of vector 4h + k in bits 0..5 and bits
// 4 - 2k .. 5 - 2k of byte p of vector 4h + 3 in bits 6..7.
//
// GroupedBlocks: Q8_0 blocks 16 to a group (BlockQ80Group), the 16 d's first and then the 16
// blocks' quants in order, 544 bytes as 16 plain blocks take. A plain block is 34 bytes, so half of
// the 32-byte quant loads of a row cross a cache line; a group is a multiple of 32 bytes, and a row
// of groups that starts 32-byte aligned (RepackedMatrix's rows do) has every load of quants aligned.
// The same values and the same arithmetic: the AVX2 kernels give the plain ones' bits, 1.4x as
// fast on a row in L1 and 1.4x from DRAM on Zen 5 (bench/RESULTS.md). Rows must hold a multiple of
// 512 values; activations are grouped the same way (ActivationType in the kernel table).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "brick/quant/kquants.hpp"
#include "brick/quant/q8_0.hpp"
#include "brick/quant/tensor_type.hpp"

namespace brick::quant {

enum class WeightLayout : unsigned char {
  Plain,                // ggml's blocks, as a GGUF file stores them
  SubBlockInterleaved,  // Q4_K, Q5_K and Q6_K blocks repacked as described above
  GroupedBlocks,        // Q8_0 blocks in groups of 16, as described above
};

std::string_view name(WeightLayout layout) noexcept;

#pragma pack(push, 1)
struct BlockQ4KInterleaved {
  fp16_t d;
  fp16_t dmin;
  std::uint8_t scales[8];  // the 6-bit sub-block scales, one per byte
  std::uint8_t mins[8];    // the 6-bit sub-block mins
  std::uint8_t qs[kBlockSize / 2];
};

struct BlockQ5KInterleaved {
  fp16_t d;
  fp16_t dmin;
  std::uint8_t scales[8];
  std::uint8_t mins[8];
  std::uint8_t qs[kBlockSize * 5 / 8];  // five vectors of 32 bytes, as described above
};
// BlockQ6K's scales and d; the quants permuted and packed as described above.
struct BlockQ6KInterleaved {
  std::uint8_t qs[kBlockSize * 3 / 4];
  std::int8_t scales[16];
  fp16_t d;
};
#pragma pack(pop)

// Sixteen consecutive Q8_0 blocks of a row: block i's d is d[i], its quants qs[32i .. 32i + 31].
struct alignas(32) BlockQ80Group {
  static constexpr std::size_t kBlocks = 16;
  fp16_t d[kBlocks];
  std::int8_t qs[kBlocks * kQ80BlockSize];
};

// Q8_K activations for interleaved weights: BlockQ8K's quants permuted by interleaved_position(),
// first in a 32-byte aligned block so that none of a kernel's 32-byte loads of them crosses a cache
// line (a BlockQ8K is 292 bytes, with its quants at offset 4: every other such load crossed one,
// and the AVX2 interleaved row kernels ran 1.1-1.2x as fast on Zen 5 once none did). 320 bytes,
// the last 28 unused.
struct alignas(32) BlockQ8KInterleaved {
  std::int8_t qs[kBlockSize];
  std::int16_t bsums[kBlockSize / 16];
  float d;
};

static_assert(sizeof(BlockQ6KInterleaved) == sizeof(BlockQ6K));
static_assert(sizeof(BlockQ8KInterleaved) == 320 && offsetof(BlockQ8KInterleaved, bsums) == 256);
static_assert(sizeof(BlockQ80Group) == BlockQ80Group::kBlocks * sizeof(BlockQ80) && offsetof(BlockQ80Group, qs) == 32);
static_assert(sizeof(BlockQ4KInterleaved) == 148 && offsetof(BlockQ4KInterleaved, qs) == 20);
static_assert(sizeof(BlockQ5KInterleaved) == 180 && offsetof(BlockQ5KInterleaved, qs) == 20);

// The position in an interleaved block (and in an interleaved Q8_K block) of value v (0..255) of
// the plain block; the permutation is its own inverse.
constexpr std::size_t interleaved_position(std::size_t v) noexcept {
  return 32 * (v % 32 / 4) + 4 * (v / 32) + v % 4;
}

// Bytes of one block of `type` in `layout`, or nothing when the layout does not apply to the type
// (SubBlockInterleaved applies to Q4_K, Q5_K and Q6_K, GroupedBlocks to Q8_0, whose block is then a
// group of 16).
std::optional<std::size_t> block_bytes(TensorType type, WeightLayout layout) noexcept;

// Values of one block of `type` in `layout` (512 for a group of Q8_0 blocks), or nothing as
// block_bytes() says.
std::optional<std::size_t> block_values(TensorType type, WeightLayout layout) noexcept;

// Bytes of a row of `values` values of `type` in `layout`, or nothing when `values` is not a whole
// number of the layout's blocks or as block_bytes() says.
std::optional<std::size_t> row_bytes(TensorType type, WeightLayout layout, std::size_t values) noexcept;

// Block by block between the layouts; in.size() must equal out.size() (else InvalidArgument).
// deinterleave(interleave(b)) == b for every block (Q4_K's and Q5_K's 12 packed scale bytes hold
// exactly the 16 6-bit values).
void interleave_q4k(std::span<const BlockQ4K> in, std::span<BlockQ4KInterleaved> out);
void interleave_q5k(std::span<const BlockQ5K> in, std::span<BlockQ5KInterleaved> out);
void interleave_q6k(std::span<const BlockQ6K> in, std::span<BlockQ6KInterleaved> out);
void deinterleave_q4k(std::span<const BlockQ4KInterleaved> in, std::span<BlockQ4K> out);
void deinterleave_q5k(std::span<const BlockQ5KInterleaved> in, std::span<BlockQ5K> out);
void deinterleave_q6k(std::span<const BlockQ6KInterleaved> in, std::span<BlockQ6K> out);

// Q8_0 blocks into groups and back: in.size() must equal 16 * out.size() (group_q8_0), out.size()
// equal 16 * in.size() (ungroup_q8_0), else InvalidArgument. ungroup_q8_0(group_q8_0(b)) == b.
void group_q8_0(std::span<const BlockQ80> in, std::span<BlockQ80Group> out);
void ungroup_q8_0(std::span<const BlockQ80Group> in, std::span<BlockQ80> out);

// Q8_K activations for interleaved weights and back: each block's quants permuted by
// interleaved_position (d and bsums unchanged); deinterleave_q8k(interleave_q8k(b)) == b. in.size()
// must equal out.size() (else InvalidArgument).
void interleave_q8k(std::span<const BlockQ8K> in, std::span<BlockQ8KInterleaved> out);
void deinterleave_q8k(std::span<const BlockQ8KInterleaved> in, std::span<BlockQ8K> out);

}  // namespace brick::quant
