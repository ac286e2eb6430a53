#pragma once
// The loops that measure a machine's peaks (graph/roofline.hpp), one translation unit per ISA so
// that each runs the widest instructions its backend has. They never allocate or throw.
#include <cstddef>
#include <cstdint>

namespace brick::graph::kernels {

// `rounds` rounds of independent multiply-add chains; returns the FLOPs done. `seed` feeds the
// chains (and the result comes back through it) so that the work cannot be optimised away.
double fma_rounds_scalar(std::uint64_t rounds, float& seed) noexcept;
double fma_rounds_avx2(std::uint64_t rounds, float& seed) noexcept;
double fma_rounds_avx512(std::uint64_t rounds, float& seed) noexcept;

// A sum over `bytes` bytes at `data` (64-byte aligned, a multiple of 256 bytes), read as four
// sequential streams.
std::uint64_t read_sum_scalar(const std::byte* data, std::size_t bytes) noexcept;
std::uint64_t read_sum_avx2(const std::byte* data, std::size_t bytes) noexcept;

}  // namespace brick::graph::kernels
