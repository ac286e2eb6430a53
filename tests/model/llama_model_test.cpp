// LlamaModel reads a llama GGUF as llama.cpp does, and refuses, naming the key or tensor, every
// file llama.cpp would run differently from Brick (or not at all).
#include "brick/model/llama_model.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "brick/core/error.hpp"
#include "brick/model/synthetic_model.hpp"
#include "brick/runtime/batch/thread_pool.hpp"
#include "brick/runtime/memory/advice.hpp"

namespace brick::model {
namespace {

using gguf::GgufFile;
using gguf::GgufWriter;

SyntheticModelSpec tiny() {
  SyntheticModelSpec spec = SyntheticModelSpec::preset("tiny");
  spec.type = FileType::F32;
  return spec;
}

// The tensors of `writer` re-added to a writer with `metadata`, but for `skip`, plus `extra`.
GgufWriter rebuild(const GgufWriter& writer, gguf::Metadata metadata, const std::string& skip = "",
                   const std::string& extra = "") {
  GgufWriter out(std::move(metadata));
  for (const gguf::TensorInfo& t : writer.tensors()) {
    if (t.name != skip) out.add_tensor(t.name, t.type, std::span(t.ne.data(), t.n_dims));
  }
  if (!extra.empty()) out.add_tensor(extra, quant::TensorType::F32, {256});
  return out;
}

// A model parsed from bytes; the bytes live in the fixture.
class LlamaModelTest : public ::testing::Test {
 protected:
  LlamaModel load(const GgufWriter& writer) {
    bytes_ = writer.to_bytes([](std::size_t, std::span<std::byte> out) {
      std::fill(out.begin(), out.end(), std::byte{0});
    });
    return LlamaModel(GgufFile::parse(bytes_, "test.gguf"));
  }

  // Expects FormatError whose message names `needle`.
  void expect_refused(const GgufWriter& writer, const std::string& needle) {
    try {
      (void)load(writer);
      ADD_FAILURE() << "no error; expected one naming " << needle;
    } catch (const FormatError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  }

  std::vector<std::byte> bytes_;
};

TEST_F(LlamaModelTest, ReadsTheConfigTheVocabAndTheWeights) {
  SyntheticModelSpec spec = tiny();
  spec.n_head_kv = 1;
  const LlamaModel model = load(synthetic_model_writer(spec));
  const LlamaConfig& c = model.config();
  EXPECT_EQ(c.n_layer, spec.n_layer);
  EXPECT_EQ(c.n_embd, spec.n_embd);
  EXPECT_EQ(c.n_head, spec.n_head);
  EXPECT_EQ(c.n_head_kv, 1u);
  EXPECT_EQ(c.n_ff, spec.n_ff);
  EXPECT_EQ(c.n_vocab, spec.n_vocab);
  EXPECT_EQ(c.n_ctx_train, spec.n_ctx);
  EXPECT_EQ(c.n_rot, spec.n_embd / spec.n_head);
  EXPECT_FLOAT_EQ(c.rms_eps, 1e-5f);
  EXPECT_EQ(model.vocab().size(), spec.n_vocab);
  EXPECT_EQ(model.vocab().piece(1), "<s>");
  EXPECT_EQ(model.vocab().byte_token(0x41), 3 + 0x41);
  EXPECT_EQ(model.weights().layers.size(), spec.n_layer);
  EXPECT_EQ(model.weights().layers[1].wk.rows(), c.kv_dim());
  EXPECT_FALSE(model.weights().tied_output);
  EXPECT_EQ(model.file_type(), FileType::F32);
  EXPECT_EQ(model.name(), spec.name());
  // The weights are views into the file's bytes.
  const gguf::TensorInfo& q = model.file().tensor("blk.0.attn_q.weight");
  EXPECT_EQ(model.weights().layers[0].wq.data().data(), model.file().tensor_data(q).data());
}

TEST_F(LlamaModelTest, ATiedModelReusesTheEmbeddingAsOutput) {
  SyntheticModelSpec spec = tiny();
  spec.tied = true;
  const LlamaModel model = load(synthetic_model_writer(spec));
  EXPECT_TRUE(model.weights().tied_output);
  EXPECT_EQ(model.weights().output.data().data(), model.weights().token_embd.data().data());
}

// The process's resident pages (/proc/self/statm).
std::size_t resident_pages() {
  std::ifstream statm("/proc/self/statm");
  std::size_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident;
}

// release() drops a mapped matrix's pages from the process, and its bytes read back the same from
// the file; bytes that are not in the model's mapping (a model parsed from memory, or another
// model's matrix) stay as they are.
TEST_F(LlamaModelTest, ReleaseDropsAMappedMatrixsPagesAndKeepsItsBytes) {
  const std::vector<std::byte> file =
      synthetic_model_writer(tiny()).to_bytes([](std::size_t, std::span<std::byte> out) {
        std::fill(out.begin(), out.end(), std::byte{0x3c});  // not zeros, which dropped pages also read as
      });
  const LlamaModel in_memory(GgufFile::parse(file, "in-memory.gguf"));
  const quant::WeightMatrix& heap_table = in_memory.weights().token_embd;
  const std::vector<std::byte> heap_bytes(heap_table.data().begin(), heap_table.data().end());
  in_memory.release(heap_table);

  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / fmt::format("brick-release-{}.gguf", getpid());
  ThreadPool pool(1);
  write_synthetic_model(tiny(), path, pool);
  {
    const LlamaModel model = LlamaModel::open(path);
    model.release(heap_table);
    const quant::WeightMatrix& table = model.weights().token_embd;  // 512 KiB of F32
    const std::vector<std::byte> before(table.data().begin(), table.data().end());
    const auto resident = static_cast<long>(resident_pages());
    model.release(table);
    // At least half of the table's 128 pages: the process (or a sanitizer's runtime) may touch
    // others meanwhile.
    const long released = resident - static_cast<long>(resident_pages());
    EXPECT_GE(released * static_cast<long>(page_size()), static_cast<long>(before.size() / 2)) << released << " pages";
    EXPECT_TRUE(std::equal(before.begin(), before.end(), table.data().begin(), table.data().end()));
  }
  std::filesystem::remove(path);
  EXPECT_TRUE(std::equal(heap_bytes.begin(), heap_bytes.end(), heap_table.data().begin(), heap_table.data().end()));
}

TEST_F(LlamaModelTest, KeysLlamaCppLeavesOptionalGetItsDefaults) {
  SyntheticModelSpec mha = tiny();
  mha.n_head_kv = mha.n_head;
  GgufWriter writer = synthetic_model_writer(mha);
  for (const char* key :
       {"llama.attention.head_count_kv", "llama.rope.dimension_count", "llama.rope.freq_base",
        "tokenizer.ggml.scores", "tokenizer.ggml.token_type", "tokenizer.ggml.bos_token_id"}) {
    writer.metadata().erase(key);
  }
  const LlamaModel model = load(writer);
  EXPECT_EQ(model.config().n_head_kv, model.config().n_head);
  EXPECT_EQ(model.config().n_rot, model.config().head_dim());
  EXPECT_FLOAT_EQ(model.config().rope_freq_base, 10000.0f);
  EXPECT_EQ(model.vocab().special().bos, 1);
  EXPECT_EQ(model.vocab().type(5), TokenType::Normal);
}

TEST_F(LlamaModelTest, PerLayerArraysOfOneValueAreAccepted) {
  GgufWriter writer = synthetic_model_writer(tiny());
  writer.metadata().set("llama.feed_forward_length",
                        gguf::Array{std::vector<std::int32_t>{512, 512}});
  writer.metadata().set("llama.attention.head_count_kv",
                        gguf::Array{std::vector<std::uint32_t>{2, 2}});
  const LlamaModel model = load(writer);
  EXPECT_EQ(model.config().n_ff, 512u);
  EXPECT_EQ(model.config().n_head_kv, 2u);
}

TEST_F(LlamaModelTest, RefusesWhatLlamaCppWouldComputeDifferently) {
  const GgufWriter base = synthetic_model_writer(tiny());
  const auto with = [&](const std::function<void(gguf::Metadata&)>& edit) {
    gguf::Metadata m = base.metadata();
    edit(m);
    return rebuild(base, std::move(m));
  };
  expect_refused(with([](auto& m) { m.set("general.architecture", "qwen2"); }),
                 "general.architecture");
  expect_refused(with([](auto& m) { m.erase("general.architecture"); }), "general.architecture");
  expect_refused(with([](auto& m) { m.erase("llama.block_count"); }), "llama.block_count");
  expect_refused(with([](auto& m) { m.erase("llama.context_length"); }), "llama.context_length");
  expect_refused(with([](auto& m) { m.erase("llama.attention.layer_norm_rms_epsilon"); }),
                 "llama.attention.layer_norm_rms_epsilon");
  expect_refused(with([](auto& m) { m.erase("llama.feed_forward_length"); }),
                 "llama.feed_forward_length");
  expect_refused(with([](auto& m) { m.erase("llama.attention.head_count"); }),
                 "llama.attention.head_count");
  expect_refused(with([](auto& m) { m.set("llama.block_count", std::int32_t{2}); }),
                 "llama.block_count");
  expect_refused(with([](auto& m) { m.set("llama.embedding_length", std::uint32_t{0}); }),
                 "llama.embedding_length");
  expect_refused(with([](auto& m) { m.set("llama.attention.head_count_kv", std::uint32_t{3}); }),
                 "head_count_kv");
  expect_refused(with([](auto& m) { m.set("llama.rope.dimension_count", std::uint32_t{32}); }),
                 "llama.rope.dimension_count");
  expect_refused(with([](auto& m) { m.set("llama.rope.scaling.type", "linear"); }),
                 "llama.rope.scaling.type");
  expect_refused(with([](auto& m) { m.set("llama.rope.scaling.factor", 4.0f); }),
                 "llama.rope.scaling.factor");
  expect_refused(with([](auto& m) { m.set("llama.expert_count", std::uint32_t{8}); }),
                 "llama.expert_count");
  expect_refused(with([](auto& m) { m.set("llama.attention.key_length", std::uint32_t{128}); }),
                 "llama.attention.key_length");
  expect_refused(with([](auto& m) { m.set("llama.vocab_size", std::uint32_t{600}); }),
                 "llama.vocab_size");
  expect_refused(
      with([](auto& m) {
        m.set("llama.feed_forward_length", gguf::Array{std::vector<std::uint32_t>{512, 1024}});
      }),
      "llama.feed_forward_length");
  expect_refused(with([](auto& m) { m.set("tokenizer.ggml.model", "gpt2"); }),
                 "tokenizer.ggml.model");
  expect_refused(with([](auto& m) { m.erase("tokenizer.ggml.tokens"); }), "tokenizer.ggml.tokens");
  expect_refused(with([](auto& m) { m.set("llama.attention.layer_norm_rms_epsilon", -1.0f); }),
                 "layer_norm_rms_epsilon");
}

TEST_F(LlamaModelTest, RefusesMissingUnknownAndMisshapenTensors) {
  const GgufWriter base = synthetic_model_writer(tiny());
  expect_refused(rebuild(base, base.metadata(), "blk.1.ffn_up.weight"), "blk.1.ffn_up.weight");
  expect_refused(rebuild(base, base.metadata(), "output_norm.weight"), "output_norm.weight");
  expect_refused(rebuild(base, base.metadata(), "", "blk.0.attn_q.bias"), "blk.0.attn_q.bias");
  expect_refused(rebuild(base, base.metadata(), "", "rope_freqs.weight"), "rope_freqs.weight");

  GgufWriter transposed(base.metadata());
  for (const gguf::TensorInfo& t : base.tensors()) {
    if (t.name == "blk.0.attn_k.weight") {
      transposed.add_tensor(t.name, t.type, {t.ne[1], t.ne[0]});
    } else {
      transposed.add_tensor(t.name, t.type, std::span(t.ne.data(), t.n_dims));
    }
  }
  expect_refused(transposed, "blk.0.attn_k.weight");

  GgufWriter vocab(base.metadata());
  vocab.metadata().set("tokenizer.ggml.tokens",
                       gguf::Array{std::vector<std::string>{"<unk>", "<s>", "</s>"}});
  for (const gguf::TensorInfo& t : base.tensors())
    vocab.add_tensor(t.name, t.type, std::span(t.ne.data(), t.n_dims));
  expect_refused(vocab, "tokenizer.ggml.tokens");

  GgufWriter norm_type(base.metadata());
  for (const gguf::TensorInfo& t : base.tensors()) {
    norm_type.add_tensor(t.name,
                         t.name == "blk.1.ffn_norm.weight" ? quant::TensorType::F16 : t.type,
                         std::span(t.ne.data(), t.n_dims));
  }
  expect_refused(norm_type, "blk.1.ffn_norm.weight");
}

}  // namespace
}  // namespace brick::model
