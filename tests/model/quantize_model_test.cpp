// brick quantize against llama.cpp's own llama_model_quantize on the same F32 model: the same type
// for every tensor and the same bytes, for every file type Brick writes.
#include "brick/model/quantize_model.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>

#include "brick/core/error.hpp"
#include "brick/gguf/gguf_file.hpp"
#include "brick/model/synthetic_model.hpp"
#include "support/llama_quantize.hpp"

namespace brick::model {
namespace {

namespace fs = std::filesystem;

class QuantizeModelTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    folder_ = fs::temp_directory_path() / fmt::format("brick-quantize-{}", getpid());
    fs::create_directories(folder_);
    SyntheticModelSpec spec = SyntheticModelSpec::preset("tiny");
    spec.type = FileType::F32;
    spec.n_layer = 8;  // enough blocks for the use_more_bits pattern to matter
    ThreadPool pool(2);
    write_synthetic_model(spec, source(), pool);
  }
  static void TearDownTestSuite() { fs::remove_all(folder_); }
  static fs::path source() { return folder_ / "f32.gguf"; }

  static fs::path folder_;
};

fs::path QuantizeModelTest::folder_;

TEST_F(QuantizeModelTest, EveryTensorHasLlamaCppQuantizesTypeAndBytes) {
  for (FileType type : {FileType::Q4_K_M, FileType::Q5_K_M, FileType::Q6_K, FileType::Q8_0,
                        FileType::F16, FileType::BF16}) {
    SCOPED_TRACE(std::string(name(type)));
    const fs::path ours = folder_ / fmt::format("brick-{}.gguf", name(type));
    const fs::path theirs = folder_ / fmt::format("llama-{}.gguf", name(type));
    ThreadPool pool(2);
    const QuantizeReport report = quantize_model(source(), ours, type, pool);
    test::llama_quantize(source(), theirs, static_cast<int>(type));
    const gguf::GgufFile a = gguf::GgufFile::open(ours);
    const gguf::GgufFile b = gguf::GgufFile::open(theirs);
    EXPECT_EQ(a.metadata().get<std::uint32_t>("general.file_type"),
              static_cast<std::uint32_t>(type));
    EXPECT_EQ(b.metadata().get<std::uint32_t>("general.file_type"),
              static_cast<std::uint32_t>(type));
    ASSERT_EQ(a.tensors().size(), b.tensors().size());
    EXPECT_EQ(report.tensors, a.tensors().size());
    for (const gguf::TensorInfo& t : b.tensors()) {
      const gguf::TensorInfo* mine = a.find_tensor(t.name);
      ASSERT_NE(mine, nullptr) << t.name;
      EXPECT_EQ(mine->type, t.type) << t.name;
      EXPECT_EQ(mine->ne, t.ne) << t.name;
      const auto x = a.tensor_data(*mine);
      const auto y = b.tensor_data(t);
      ASSERT_EQ(x.size(), y.size()) << t.name;
      EXPECT_EQ(std::memcmp(x.data(), y.data(), x.size()), 0) << t.name << " bytes differ";
    }
  }
}

TEST_F(QuantizeModelTest, RequantizingAQuantizedModelDequantizesFirst) {
  const fs::path q8 = folder_ / "q8.gguf", q4 = folder_ / "q4-from-q8.gguf";
  ThreadPool pool(1);
  quantize_model(source(), q8, FileType::Q8_0, pool);
  const QuantizeReport report = quantize_model(q8, q4, FileType::Q4_K_M, pool);
  EXPECT_GT(report.quantized, 0u);
  const gguf::GgufFile file = gguf::GgufFile::open(q4);
  EXPECT_EQ(file.tensor("blk.0.attn_q.weight").type, quant::TensorType::Q4_K);
  EXPECT_EQ(file.tensor("output.weight").type, quant::TensorType::Q6_K);
}

TEST_F(QuantizeModelTest, BadRequestsLeaveNoOutput) {
  ThreadPool pool(1);
  EXPECT_THROW(quantize_model(source(), source(), FileType::Q8_0, pool), InvalidArgument);
  const fs::path out = folder_ / "never.gguf";
  EXPECT_THROW(quantize_model(folder_ / "missing.gguf", out, FileType::Q8_0, pool), IoError);
  EXPECT_THROW(
      quantize_model(source(), folder_ / "no-such-folder" / "out.gguf", FileType::Q8_0, pool),
      IoError);
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
}  // namespace brick::model
