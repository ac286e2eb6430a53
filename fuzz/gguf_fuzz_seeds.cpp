// Writes the GGUF reader fuzzer's seed corpus into the folder given as the only argument: small
// valid files made by GgufWriter that between them hold every value type, nested and empty arrays,
// tensors of several types and shapes, another alignment and a v2 header, so the fuzzer starts
// from inputs that reach every part of the reader.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "brick/gguf/gguf_writer.hpp"
#include "brick/runtime/atomic_file.hpp"
#include "seed_folder.hpp"

namespace {

using brick::gguf::Array;
using brick::gguf::Bool;
using brick::gguf::GgufWriter;
using brick::gguf::Metadata;
using brick::quant::TensorType;

void fill(std::size_t index, std::span<std::byte> out) {
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<std::byte>(index + i);
}

void save(const std::filesystem::path& path, const std::vector<std::byte>& bytes) {
  brick::write_file_atomically(path, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

Metadata scalars() {
  Metadata m;
  m.set("u8", std::uint8_t{1});
  m.set("i8", std::int8_t{-1});
  m.set("u16", std::uint16_t{2});
  m.set("i16", std::int16_t{-2});
  m.set("u32", std::uint32_t{3});
  m.set("i32", std::int32_t{-3});
  m.set("f32", 0.5f);
  m.set("bool", true);
  m.set("str", "text");
  m.set("u64", std::uint64_t{4});
  m.set("i64", std::int64_t{-4});
  m.set("f64", 0.25);
  return m;
}

Metadata arrays() {
  Metadata m;
  m.set("u8s", Array{std::vector<std::uint8_t>{1, 2}});
  m.set("i16s", Array{std::vector<std::int16_t>{-1}});
  m.set("u32s", Array{std::vector<std::uint32_t>{}});
  m.set("f32s", Array{std::vector<float>{1.0f, -2.0f}});
  m.set("bools", Array{std::vector<Bool>{{true}, {false}}});
  m.set("strs", Array{std::vector<std::string>{"<s>", ""}});
  m.set("u64s", Array{std::vector<std::uint64_t>{5}});
  m.set("f64s", Array{std::vector<double>{-0.0}});
  m.set("nested",
        Array{std::vector<Array>{Array{std::vector<std::int8_t>{7}}, Array{std::vector<Array>{}}}});
  return m;
}

GgufWriter model(Metadata metadata) {
  metadata.set("general.architecture", "llama");
  metadata.set("tokenizer.ggml.tokens",
               Array{std::vector<std::string>{"<unk>", "<s>", "</s>", "a"}});
  GgufWriter writer(std::move(metadata));
  writer.add_tensor("token_embd.weight", TensorType::Q8_0, {32, 4});
  writer.add_tensor("output_norm.weight", TensorType::F32, {5});
  writer.add_tensor("blk.0.attn_q.weight", TensorType::F16, {2, 2, 2, 2});
  return writer;
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<std::filesystem::path> given = brick::fuzz::seed_folder(argc, argv);
  if (!given) return 2;
  const std::filesystem::path& folder = *given;
  save(folder / "empty.gguf", GgufWriter().to_bytes({}));
  save(folder / "scalars.gguf", GgufWriter(scalars()).to_bytes({}));
  save(folder / "arrays.gguf", GgufWriter(arrays()).to_bytes({}));
  save(folder / "model.gguf", model({}).to_bytes(fill));
  Metadata aligned;
  aligned.set("general.alignment", std::uint32_t{64});
  save(folder / "aligned64.gguf", model(aligned).to_bytes(fill));
  // v2 has v3's layout; only the version differs.
  std::vector<std::byte> v2 = model({}).to_bytes(fill);
  v2[4] = std::byte{2};
  save(folder / "v2.gguf", v2);
  return 0;
}
