// The llama decoder against an independent double-precision forward pass of the same small model
// (dequantized weights, f32 KV): logits agree step after step, for MHA and GQA, F32 and k-quant
// weights, on every backend; with the F16 cache they stay close; and every brick verifies.
#include "brick/model/llama_decoder.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "brick/core/error.hpp"
#include "brick/quant/kquants.hpp"
#include "support/random_data.hpp"

namespace brick::model {
namespace {

using quant::TensorType;
using quant::WeightMatrix;

// A small model that owns its tensors: F32, or Q5_K with Q6_K for wv/down/output (a Q5_K_M mix).
struct TinyModel {
  LlamaConfig config;
  std::vector<std::vector<std::byte>> storage;
  std::vector<std::vector<float>> floats;  // the dequantized value of every matrix, for the reference
  std::vector<std::vector<float>> norms;
  LlamaWeights weights;

  TinyModel(std::size_t n_head, std::size_t n_head_kv, bool quantized, bool tied, std::uint64_t seed) {
    config.n_vocab = 96;
    config.n_embd = 256;
    config.n_layer = 2;
    config.n_head = n_head;
    config.n_head_kv = n_head_kv;
    config.n_ff = 512;
    config.n_ctx_train = 64;
    config.n_rot = config.head_dim();
    config.rms_eps = 1e-5f;
    floats.reserve(64);
    norms.reserve(64);
    storage.reserve(64);
    weights.token_embd = matrix(config.n_vocab, config.n_embd, quantized ? TensorType::Q5_K : TensorType::F32,
                                1.0f, seed++);
    for (std::size_t l = 0; l < config.n_layer; ++l) {
      LlamaLayerWeights layer;
      const float s = 1.0f / std::sqrt(static_cast<float>(config.n_embd));
      const TensorType q5 = quantized ? TensorType::Q5_K : TensorType::F32;
      const TensorType q6 = quantized ? TensorType::Q6_K : TensorType::F32;
      layer.attn_norm = norm(seed++);
      layer.wq = matrix(config.n_embd, config.n_embd, q5, 2 * s, seed++);
      layer.wk = matrix(config.kv_dim(), config.n_embd, q5, 2 * s, seed++);
      layer.wv = matrix(config.kv_dim(), config.n_embd, q6, s, seed++);
      layer.wo = matrix(config.n_embd, config.n_embd, q5, s, seed++);
      layer.ffn_norm = norm(seed++);
      layer.gate = matrix(config.n_ff, config.n_embd, q5, s, seed++);
      layer.up = matrix(config.n_ff, config.n_embd, q5, s, seed++);
      layer.down = matrix(config.n_embd, config.n_ff, q6, 1.0f / std::sqrt(static_cast<float>(config.n_ff)), seed++);
      weights.layers.push_back(layer);
    }
    weights.output_norm = norm(seed++);
    weights.tied_output = tied;
    weights.output = tied ? weights.token_embd
                          : matrix(config.n_vocab, config.n_embd, quantized ? TensorType::Q6_K : TensorType::F32,
                                   0.5f, seed++);
  }

  std::span<const float> norm(std::uint64_t seed) {
    std::vector<float> w = test::normal(config.n_embd, seed, 1.0f, 0.1f);
    return norms.emplace_back(std::move(w));
  }

  WeightMatrix matrix(std::size_t rows, std::size_t cols, TensorType type, float scale, std::uint64_t seed) {
    const std::vector<float> values = test::normal(rows * cols, seed, 0.0f, scale);
    std::vector<std::byte>& bytes = storage.emplace_back();
    std::vector<float>& exact = floats.emplace_back(rows * cols);
    const std::size_t blocks = rows * cols / quant::kBlockSize;
    if (type == TensorType::Q5_K) {
      std::vector<quant::BlockQ5K> q(blocks);
      quant::quantize_q5k(values, q);
      quant::dequantize_q5k(q, exact);
      bytes.resize(blocks * sizeof(quant::BlockQ5K));
      std::memcpy(bytes.data(), q.data(), bytes.size());
    } else if (type == TensorType::Q6_K) {
      std::vector<quant::BlockQ6K> q(blocks);
      quant::quantize_q6k(values, q);
      quant::dequantize_q6k(q, exact);
      bytes.resize(blocks * sizeof(quant::BlockQ6K));
      std::memcpy(bytes.data(), q.data(), bytes.size());
    } else {
      exact = values;
      bytes.resize(values.size() * sizeof(float));
      std::memcpy(bytes.data(), values.data(), bytes.size());
    }
    return WeightMatrix(type, bytes, rows, cols);
  }

  const std::vector<float>& dequantized(const WeightMatrix& w) const {
    for (std::size_t i = 0; i < storage.size(); ++i) {
      if (storage[i].data() == w.data().data()) return floats[i];
    }
    throw std::logic_error("unknown matrix");
  }
};

// The forward pass in double: llama's math written out plainly.
class Reference {
 public:
  explicit Reference(const TinyModel& m) : m_(m), k_(m.config.n_layer), v_(m.config.n_layer) {}

  std::vector<double> step(TokenId token) {
    const LlamaConfig& c = m_.config;
    const std::size_t d = c.head_dim(), group = c.n_head / c.n_head_kv;
    const auto& embd = m_.dequantized(m_.weights.token_embd);
    std::vector<double> x(embd.begin() + token * c.n_embd, embd.begin() + (token + 1) * c.n_embd);
    const std::size_t pos = n_past_++;
    for (std::size_t l = 0; l < c.n_layer; ++l) {
      const LlamaLayerWeights& w = m_.weights.layers[l];
      const auto xn = rms_norm(x, w.attn_norm);
      auto q = matvec(w.wq, xn), k = matvec(w.wk, xn), v = matvec(w.wv, xn);
      rope(q, pos);
      rope(k, pos);
      k_[l].push_back(k);
      v_[l].push_back(v);
      std::vector<double> attn(c.n_embd, 0.0);
      for (std::size_t h = 0; h < c.n_head; ++h) {
        const std::size_t g = h / group;
        std::vector<double> s(pos + 1);
        double max = -1e300;
        for (std::size_t t = 0; t <= pos; ++t) {
          double dot = 0;
          for (std::size_t i = 0; i < d; ++i) dot += q[h * d + i] * k_[l][t][g * d + i];
          s[t] = dot / std::sqrt(static_cast<double>(d));
          max = std::max(max, s[t]);
        }
        double sum = 0;
        for (double& e : s) sum += (e = std::exp(e - max));
        for (std::size_t t = 0; t <= pos; ++t) {
          for (std::size_t i = 0; i < d; ++i) attn[h * d + i] += s[t] / sum * v_[l][t][g * d + i];
        }
      }
      const auto o = matvec(w.wo, attn);
      for (std::size_t i = 0; i < x.size(); ++i) x[i] += o[i];
      const auto hn = rms_norm(x, w.ffn_norm);
      const auto gate = matvec(w.gate, hn), up = matvec(w.up, hn);
      std::vector<double> act(c.n_ff);
      for (std::size_t i = 0; i < act.size(); ++i) act[i] = gate[i] / (1 + std::exp(-gate[i])) * up[i];
      const auto down = matvec(w.down, act);
      for (std::size_t i = 0; i < x.size(); ++i) x[i] += down[i];
    }
    return matvec(m_.weights.output, rms_norm(x, m_.weights.output_norm));
  }

 private:
  std::vector<double> rms_norm(const std::vector<double>& x, std::span<const float> w) const {
    double ss = 0;
    for (double v : x) ss += v * v;
    const double scale = 1.0 / std::sqrt(ss / static_cast<double>(x.size()) + m_.config.rms_eps);
    std::vector<double> out(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) out[i] = x[i] * scale * w[i];
    return out;
  }
  std::vector<double> matvec(const WeightMatrix& w, const std::vector<double>& x) const {
    const auto& values = m_.dequantized(w);
    std::vector<double> y(w.rows());
    for (std::size_t r = 0; r < w.rows(); ++r) {
      for (std::size_t i = 0; i < w.cols(); ++i) y[r] += values[r * w.cols() + i] * x[i];
    }
    return y;
  }
  void rope(std::vector<double>& x, std::size_t pos) const {
    const std::size_t d = m_.config.head_dim();
    for (std::size_t h = 0; h < x.size() / d; ++h) {
      for (std::size_t i = 0; i < d / 2; ++i) {
        const double theta = static_cast<double>(pos) * std::pow(m_.config.rope_freq_base, -2.0 * i / d);
        const double a = x[h * d + 2 * i], b = x[h * d + 2 * i + 1];
        x[h * d + 2 * i] = a * std::cos(theta) - b * std::sin(theta);
        x[h * d + 2 * i + 1] = a * std::sin(theta) + b * std::cos(theta);
      }
    }
  }

  const TinyModel& m_;
  std::size_t n_past_ = 0;
  std::vector<std::vector<std::vector<double>>> k_, v_;
};

double max_abs(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::abs(x));
  return m;
}

struct Case {
  const char* name;
  std::size_t n_head, n_head_kv;
  bool quantized, tied;
};

class LlamaDecoderTest : public ::testing::TestWithParam<Case> {};

TEST_P(LlamaDecoderTest, LogitsFollowTheDoubleReferenceOnEveryBackend) {
  const Case& param = GetParam();
  const TinyModel model(param.n_head, param.n_head_kv, param.quantized, param.tied, 100);
  ThreadPool pool(2);
  const std::vector<TokenId> tokens = {1, 17, 42, 5, 93, 17, 60, 2};
  for (Backend backend : {Backend::Scalar, Backend::Auto}) {
    LlamaOptions options;
    options.backend = backend;
    options.kv_type = KvType::F32;
    options.n_ctx = 16;
    LlamaDecoder decoder(model.config, model.weights, pool, options);
    Reference reference(model);
    for (TokenId token : tokens) {
      const auto logits = decoder.step(token);
      ASSERT_TRUE(logits.has_value());
      const std::vector<double> expected = reference.step(token);
      // Q8_K activations carry ~0.4% relative error per projection; f32 weights only rounding.
      const double tolerance = (param.quantized ? 0.05 : 2e-4) * max_abs(expected);
      for (std::size_t i = 0; i < expected.size(); ++i) {
        ASSERT_NEAR((*logits)[i], expected[i], tolerance) << name(decoder.backend()) << " token " << token
                                                          << " logit " << i;
      }
    }
    EXPECT_EQ(decoder.n_past(), tokens.size());
    for (const VerifyReport& report : decoder.verify()) {
      EXPECT_TRUE(report.passed()) << report.brick;
    }
    EXPECT_EQ(decoder.verify().size(), decoder.brick_count());
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, LlamaDecoderTest,
                         ::testing::Values(Case{"mha_f32", 4, 4, false, false}, Case{"gqa_f32_tied", 4, 1, false, true},
                                           Case{"gqa_q5km", 8, 2, true, false}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(LlamaDecoder, F16CacheStaysCloseToF32AndFullContextIsACapacityError) {
  const TinyModel model(4, 2, false, false, 7);
  ThreadPool pool(1);
  LlamaOptions f32;
  f32.kv_type = KvType::F32;
  f32.n_ctx = 4;
  LlamaOptions f16 = f32;
  f16.kv_type = KvType::F16;
  LlamaDecoder a(model.config, model.weights, pool, f32), b(model.config, model.weights, pool, f16);
  for (TokenId token : {3, 9, 27, 81}) {
    const auto la = a.step(token);
    const std::vector<float> x(la->begin(), la->end());
    const auto lb = b.step(token);
    double m = 0;
    for (float v : x) m = std::max(m, static_cast<double>(std::abs(v)));
    for (std::size_t i = 0; i < x.size(); ++i) EXPECT_NEAR((*lb)[i], x[i], 0.01 * m) << i;
  }
  EXPECT_THROW((void)a.step(1), CapacityError);
  EXPECT_THROW((void)b.step(-1), InvalidArgument);
  a.reset();
  EXPECT_NO_THROW((void)a.step(1));
}

TEST(LlamaDecoder, RejectsInconsistentModels) {
  TinyModel model(4, 2, false, false, 11);
  ThreadPool pool(1);
  LlamaOptions options;
  options.n_ctx = 100;  // above n_ctx_train 64
  EXPECT_THROW(LlamaDecoder(model.config, model.weights, pool, options), InvalidArgument);
  LlamaConfig bad = model.config;
  bad.n_head_kv = 3;
  EXPECT_THROW(LlamaDecoder(bad, model.weights, pool), FormatError);
  LlamaWeights missing = model.weights;
  missing.layers.pop_back();
  EXPECT_THROW(LlamaDecoder(model.config, missing, pool), FormatError);
}

}  // namespace
}  // namespace brick::model

namespace brick::model {
namespace {

TEST(LlamaDecoder, BatchesGiveTheLogitsOfOneTokenAtATime) {
  const TinyModel model(8, 2, true, false, 21);
  ThreadPool pool(2);
  const std::vector<TokenId> tokens = {1, 17, 42, 5, 93, 17, 60, 2};
  for (const std::size_t n_batch : {std::size_t{3}, std::size_t{8}}) {
    LlamaOptions options;
    options.n_ctx = 16;
    options.n_batch = n_batch;
    LlamaDecoder batched(model.config, model.weights, pool, options);
    LlamaDecoder single(model.config, model.weights, pool, options);
    const auto a = batched.evaluate(tokens);
    ASSERT_TRUE(a.has_value());
    const std::vector<float> batch_logits(a->begin(), a->end());
    std::vector<float> step_logits;
    for (const TokenId token : tokens) {
      const auto b = single.step(token);
      ASSERT_TRUE(b.has_value());
      step_logits.assign(b->begin(), b->end());
    }
    EXPECT_EQ(batch_logits, step_logits) << "n_batch " << n_batch;
    EXPECT_EQ(batched.n_past(), tokens.size());
    // The next token sees the same cache either way.
    const auto next_a = batched.step(7);
    const auto next_b = single.step(7);
    EXPECT_EQ(std::vector<float>(next_a->begin(), next_a->end()), std::vector<float>(next_b->begin(), next_b->end()));
  }
}

// On AVX2 the Q5_K and Q6_K matrices are repacked into the interleaved layout, which changes no bit
// of the logits, of a batch or of single steps; a tied output is repacked once, for the lookup too.
TEST(LlamaDecoder, RepackedWeightsGiveTheSameLogits) {
  if (!is_supported(Backend::Avx2)) GTEST_SKIP() << "this CPU has no AVX2";
  ThreadPool pool(2);
  const std::vector<TokenId> tokens = {1, 17, 42, 5, 93, 17};
  for (const bool tied : {false, true}) {
    const TinyModel model(8, 2, true, tied, 31);
    LlamaOptions options;
    options.backend = Backend::Avx2;
    options.n_ctx = 16;
    LlamaOptions plain_options = options;
    plain_options.repack = false;
    std::vector<const std::byte*> copied;  // the caller's matrices, as each was copied
    options.on_repacked = [&](const quant::WeightMatrix& source) { copied.push_back(source.data().data()); };
    LlamaDecoder repacked(model.config, model.weights, pool, options);
    ASSERT_EQ(copied.size(), repacked.repacked_matrices()) << tied;
    EXPECT_EQ(copied.front(), model.weights.layers[0].wq.data().data());
    EXPECT_EQ(copied.back(), model.weights.output.data().data());
    LlamaDecoder plain(model.config, model.weights, pool, plain_options);
    // Every projection of every layer, and the output (Q6_K, or the tied Q5_K table).
    EXPECT_EQ(repacked.repacked_matrices(), 7 * model.config.n_layer + 1) << tied;
    EXPECT_EQ(plain.repacked_matrices(), 0u);
    EXPECT_EQ(repacked.weights().layers[0].wq.layout(), quant::WeightLayout::SubBlockInterleaved);
    EXPECT_EQ(repacked.weights().layers[0].wv.layout(), quant::WeightLayout::SubBlockInterleaved);  // Q6_K
    EXPECT_EQ(&plain.weights(), &model.weights);
    const auto a = repacked.evaluate(std::span(tokens).first(4));
    const auto b = plain.evaluate(std::span(tokens).first(4));
    ASSERT_TRUE(a.has_value() && b.has_value());
    EXPECT_EQ(std::vector<float>(a->begin(), a->end()), std::vector<float>(b->begin(), b->end())) << tied;
    for (const TokenId token : std::span(tokens).subspan(4)) {
      const auto c = repacked.step(token);
      const auto d = plain.step(token);
      ASSERT_TRUE(c.has_value() && d.has_value());
      EXPECT_EQ(std::vector<float>(c->begin(), c->end()), std::vector<float>(d->begin(), d->end())) << tied;
    }
  }
}

TEST(LlamaDecoder, EveryBrickVerifiesAfterABatch) {
  const TinyModel model(4, 2, true, true, 5);
  ThreadPool pool(2);
  LlamaOptions options;
  options.n_ctx = 16;
  LlamaDecoder decoder(model.config, model.weights, pool, options);
  const std::vector<TokenId> prompt = {1, 2, 3, 4, 5};
  const auto logits = decoder.evaluate(prompt);
  ASSERT_TRUE(logits.has_value());
  const std::vector<float> before(logits->begin(), logits->end());
  const auto reports = decoder.verify();
  EXPECT_EQ(reports.size(), decoder.brick_count());
  for (const VerifyReport& report : reports) EXPECT_TRUE(report.passed()) << report.brick;
  EXPECT_EQ(decoder.n_past(), prompt.size());
  // Decoding goes on from the same state.
  LlamaDecoder fresh(model.config, model.weights, pool, options);
  (void)fresh.evaluate(prompt);
  const auto a = decoder.step(9);
  const auto b = fresh.step(9);
  EXPECT_EQ(std::vector<float>(a->begin(), a->end()), std::vector<float>(b->begin(), b->end()));
}

}  // namespace
}  // namespace brick::model
