// Synthetic models: valid SentencePiece vocabularies, llama.cpp's tensor types, weights with the
// statistics asked for, and files that are the same bytes for a seed whatever the thread count.
#include "brick/model/synthetic_model.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include "brick/core/error.hpp"
#include "brick/model/llama_model.hpp"
#include "brick/model/tokenizer.hpp"
#include "brick/quant/quantize.hpp"

namespace brick::model {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

fs::path temp(const std::string& name) {
  return fs::temp_directory_path() / fmt::format("brick-synthetic-{}-{}", getpid(), name);
}

TEST(SyntheticVocab, PiecesAreUniqueReachableByMergesAndByteTokensAreAllThere) {
  const SyntheticVocab v = synthetic_vocab(2000, 3);
  ASSERT_EQ(v.pieces.size(), 2000u);
  EXPECT_EQ(std::set<std::string>(v.pieces.begin(), v.pieces.end()).size(), v.pieces.size());
  EXPECT_EQ(v.pieces[0], "<unk>");
  EXPECT_EQ(v.pieces[2], "</s>");
  for (int byte = 0; byte < 256; ++byte) {
    EXPECT_EQ(v.pieces[3 + static_cast<std::size_t>(byte)], fmt::format("<0x{:02X}>", byte));
    EXPECT_EQ(v.types[3 + static_cast<std::size_t>(byte)],
              static_cast<std::int32_t>(TokenType::Byte));
  }
  const std::set<std::string> all(v.pieces.begin(), v.pieces.end());
  for (std::size_t i = 259; i < v.pieces.size(); ++i) {
    const std::string& piece = v.pieces[i];
    // Every longer piece is a piece plus one more character: the tokenizer can merge into it.
    if (piece.size() > 1 && piece != "\xe2\x96\x81") {
      EXPECT_TRUE(all.count(piece.substr(0, piece.size() - 1))) << piece;
    }
    if (i > 259) {
      EXPECT_LT(v.scores[i], v.scores[i - 1]);
    }
  }
  const SyntheticVocab again = synthetic_vocab(2000, 3);
  EXPECT_EQ(again.pieces, v.pieces);
  EXPECT_NE(synthetic_vocab(2000, 4).pieces, v.pieces);
  EXPECT_THROW(synthetic_vocab(300, 1), InvalidArgument);
}

TEST(SyntheticModel, TheTokenizerEncodesWordsIntoMultiCharacterPieces) {
  const SyntheticVocab v = synthetic_vocab(4000, 42);
  std::vector<std::string_view> pieces(v.pieces.begin(), v.pieces.end());
  const Vocab vocab(pieces, v.scores, v.types);
  const Tokenizer tokenizer(vocab);
  const std::string text = "the tea is on the site";
  const auto ids = tokenizer.encode(text, false);
  EXPECT_LT(ids.size(), text.size());
  EXPECT_EQ(tokenizer.decode(ids), text);
}

TEST(SyntheticModel, PresetsHaveTheirSizesAndBadSpecsAreRefused) {
  EXPECT_GT(SyntheticModelSpec::preset("base").parameters(), 1'000'000'000u);
  EXPECT_LT(SyntheticModelSpec::preset("small").parameters(), 300'000'000u);
  EXPECT_THROW(SyntheticModelSpec::preset("huge"), InvalidArgument);
  SyntheticModelSpec spec = SyntheticModelSpec::preset("tiny");
  spec.n_head_kv = 3;
  EXPECT_THROW(spec.validate(), InvalidArgument);
  spec = SyntheticModelSpec::preset("tiny");
  spec.n_ff = 500;  // not whole Q4_K blocks
  EXPECT_THROW(spec.validate(), InvalidArgument);
  spec.type = FileType::F32;
  EXPECT_NO_THROW(spec.validate());
  spec.n_vocab = 10;
  EXPECT_THROW(spec.validate(), InvalidArgument);
}

TEST(SyntheticModel, FilesAreTheSameBytesForASeedWhateverTheThreads) {
  SyntheticModelSpec spec = SyntheticModelSpec::preset("tiny");
  spec.type = FileType::Q5_K_M;
  const fs::path one = temp("one.gguf"), two = temp("two.gguf");
  ThreadPool single(1), pair(2);
  write_synthetic_model(spec, one, single);
  write_synthetic_model(spec, two, pair);
  EXPECT_EQ(slurp(one), slurp(two));
  spec.seed += 1;
  write_synthetic_model(spec, two, pair);
  EXPECT_NE(slurp(one), slurp(two));
  fs::remove(one);
  fs::remove(two);
}

TEST(SyntheticModel, TensorsHaveLlamaCppsTypesAndTheAskedForStatistics) {
  SyntheticModelSpec spec = SyntheticModelSpec::preset("tiny");
  spec.type = FileType::Q4_K_M;
  const fs::path path = temp("stats.gguf");
  ThreadPool pool(2);
  write_synthetic_model(spec, path, pool);
  const LlamaModel model = LlamaModel::open(path);
  for (const gguf::TensorInfo& t : model.file().tensors()) {
    EXPECT_EQ(t.type, llama_tensor_type(spec.type, t.name, t.n_dims, spec.n_layer, true)) << t.name;
    std::vector<float> values(t.elements());
    quant::dequantize(t.type, model.file().tensor_data(t), values);
    double sum = 0, squares = 0;
    for (float v : values) {
      sum += v;
      squares += static_cast<double>(v) * v;
    }
    const double mean = sum / static_cast<double>(values.size());
    const double sigma = std::sqrt(squares / static_cast<double>(values.size()) - mean * mean);
    if (t.n_dims == 1) {
      EXPECT_NEAR(mean, 1.0, 0.03) << t.name;
    } else {
      EXPECT_NEAR(mean, 0.0, 0.002) << t.name;
      EXPECT_NEAR(sigma, 0.02 * std::sqrt(1.0 + 63.0 / 1024.0), 0.003)
          << t.name;  // the heavy tail adds variance
    }
  }
  fs::remove(path);
}

}  // namespace
}  // namespace brick::model
