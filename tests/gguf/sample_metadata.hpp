#pragma once
// Metadata that exercises every GGUF value type, and tensor bytes that differ per tensor and per
// byte, for round trips and cross-checks.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "brick/gguf/metadata.hpp"

namespace brick::gguf::test {

// Every scalar type at an edge of its range, strings (empty, UTF-8) and arrays of every scalar
// type, empty ones included: all that ggml's gguf API can also write (its setters take C strings,
// so no NUL inside a string).
inline Metadata flat_sample_metadata() {
  Metadata m;
  m.set("general.architecture", "llama");
  m.set("general.name", "tiny \xc3\xa9t\xc3\xa9 model");
  m.set("sample.empty_string", "");
  m.set("sample.u8", std::uint8_t{255});
  m.set("sample.i8", std::int8_t{-128});
  m.set("sample.u16", std::uint16_t{65535});
  m.set("sample.i16", std::int16_t{-32768});
  m.set("sample.u32", std::uint32_t{4294967295u});
  m.set("sample.i32", std::int32_t{-2147483647 - 1});
  m.set("sample.f32", -0.0f);
  m.set("sample.f32_small", std::numeric_limits<float>::denorm_min());
  m.set("sample.u64", std::numeric_limits<std::uint64_t>::max());
  m.set("sample.i64", std::numeric_limits<std::int64_t>::min());
  m.set("sample.f64", 1e300);
  m.set("sample.true", true);
  m.set("sample.false", false);
  m.set("sample.u8s", Array{std::vector<std::uint8_t>{0, 1, 255}});
  m.set("sample.i8s", Array{std::vector<std::int8_t>{-128, 0, 127}});
  m.set("sample.u16s", Array{std::vector<std::uint16_t>{1, 65535}});
  m.set("sample.i16s", Array{std::vector<std::int16_t>{-1, 1}});
  m.set("sample.u32s", Array{std::vector<std::uint32_t>{7, 8, 9}});
  m.set("sample.i32s", Array{std::vector<std::int32_t>{-7, 0, 7}});
  m.set("sample.f32s",
        Array{std::vector<float>{0.5f, -1.0f, std::numeric_limits<float>::infinity()}});
  m.set("sample.bools", Array{std::vector<Bool>{{true}, {false}, {true}}});
  m.set("sample.strings", Array{std::vector<std::string>{"<unk>", "", "\xe2\x96\x81the"}});
  m.set("sample.u64s",
        Array{std::vector<std::uint64_t>{0, std::numeric_limits<std::uint64_t>::max()}});
  m.set("sample.i64s",
        Array{std::vector<std::int64_t>{-1, std::numeric_limits<std::int64_t>::max()}});
  m.set("sample.f64s", Array{std::vector<double>{-2.5, 1e-300}});
  m.set("sample.empty_u32s", Array{std::vector<std::uint32_t>{}});
  m.set("sample.empty_strings", Array{std::vector<std::string>{}});
  return m;
}

// flat_sample_metadata() plus what only Brick handles: a string with a NUL inside, and arrays of
// arrays (which ggml cannot read): nested, empty, other element types at the inner level.
inline Metadata sample_metadata() {
  Metadata m = flat_sample_metadata();
  m.set("sample.nul_inside", std::string("a\0b", 3));
  m.set("sample.nested",
        Array{std::vector<Array>{Array{std::vector<std::uint8_t>{1, 2}},
                                 Array{std::vector<std::string>{"a", ""}},
                                 Array{std::vector<Array>{Array{std::vector<double>{}}}}}});
  m.set("sample.empty_nested", Array{std::vector<Array>{}});
  return m;
}

// Tensor `index`'s bytes: a pattern that differs between tensors and between neighbouring bytes.
inline void fill_pattern(std::size_t index, std::span<std::byte> out) {
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<std::byte>(index * 131 + i * 7 + 1);
}

}  // namespace brick::gguf::test
