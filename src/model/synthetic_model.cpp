#include "brick/model/synthetic_model.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <limits>
#include <numbers>
#include <unordered_set>

#include "brick/core/error.hpp"
#include "brick/model/vocab.hpp"
#include "brick/quant/quantize.hpp"

namespace brick::model {
namespace {

using quant::TensorType;

// SplitMix64: seeds each generator from a (seed, tensor, row) triple.
constexpr std::uint64_t mix(std::uint64_t x) noexcept {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// xoshiro256**: small, fast and the same sequence on every platform (unlike the standard
// distributions, whose algorithms the library picks).
class Rng {
 public:
  explicit Rng(std::uint64_t seed) noexcept {
    for (std::uint64_t& word : s_) word = seed = mix(seed);
  }
  std::uint64_t next() noexcept {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  // Uniform in (0, 1].
  float unit() noexcept { return static_cast<float>((next() >> 40) + 1) * 0x1p-24f; }
  std::size_t below(std::size_t n) noexcept { return static_cast<std::size_t>(next() % n); }

 private:
  static constexpr std::uint64_t rotl(std::uint64_t x, int k) noexcept {
    return (x << k) | (x >> (64 - k));
  }
  std::array<std::uint64_t, 4> s_{};
};

// Normal values (Box-Muller), mean `mean`, standard deviation `sigma`; one value in 1024 is
// scaled by 8, the heavy tail of trained weights that makes block scales realistic.
void draw_normal(Rng& rng, float mean, float sigma, std::span<float> out) noexcept {
  for (std::size_t i = 0; i < out.size(); i += 2) {
    const float radius = std::sqrt(-2.0f * std::log(rng.unit()));
    const float angle = 2.0f * std::numbers::pi_v<float> * rng.unit();
    out[i] = radius * std::cos(angle);
    if (i + 1 < out.size()) out[i + 1] = radius * std::sin(angle);
  }
  for (float& v : out) {
    if ((rng.next() & 1023) == 0) v *= 8.0f;
    v = mean + sigma * v;
  }
}

constexpr std::string_view kSpace = "\xe2\x96\x81";  // "▁"
// The alphabet every vocabulary holds as single-character pieces, and the letters pieces grow by,
// in English frequency order (earlier letters are drawn more often).
constexpr std::string_view kLetters = "etaoinshrdlcumwfgypbvkjxqz";
constexpr std::string_view kOthers = "ETAOINSHRDLCUMWFGYPBVKJXQZ0123456789.,!?;:'\"-()";
constexpr std::size_t kSpecialTokens = 3 + 256;
constexpr std::size_t kAlphabet = 1 + kLetters.size() + kOthers.size();
constexpr std::size_t kMinVocab = kSpecialTokens + kAlphabet;
constexpr std::size_t kMaxPieceBytes = 16;

char frequent_letter(Rng& rng) noexcept {
  // Squaring a uniform index favours the front of the list.
  const float u = rng.unit();
  return kLetters[std::min(kLetters.size() - 1,
                           static_cast<std::size_t>(u * u * static_cast<float>(kLetters.size())))];
}

struct TensorPlan {
  std::string name;
  TensorType type;
  std::size_t rows, cols;
  bool norm;
};

std::vector<TensorPlan> tensor_plan(const SyntheticModelSpec& s) {
  const std::size_t kv = s.n_head_kv * (s.n_embd / s.n_head);
  std::vector<TensorPlan> plan;
  const auto add = [&](std::string name, std::size_t rows, std::size_t cols) {
    const bool norm = rows == 1;
    const TensorType type = llama_tensor_type(s.type, name, norm ? 1 : 2, s.n_layer, !s.tied);
    plan.push_back({std::move(name), type, rows, cols, norm});
  };
  add("token_embd.weight", s.n_vocab, s.n_embd);
  for (std::size_t i = 0; i < s.n_layer; ++i) {
    const auto blk = [i](const char* what) { return fmt::format("blk.{}.{}.weight", i, what); };
    add(blk("attn_norm"), 1, s.n_embd);
    add(blk("attn_q"), s.n_embd, s.n_embd);
    add(blk("attn_k"), kv, s.n_embd);
    add(blk("attn_v"), kv, s.n_embd);
    add(blk("attn_output"), s.n_embd, s.n_embd);
    add(blk("ffn_norm"), 1, s.n_embd);
    add(blk("ffn_gate"), s.n_ff, s.n_embd);
    add(blk("ffn_up"), s.n_ff, s.n_embd);
    add(blk("ffn_down"), s.n_embd, s.n_ff);
  }
  add("output_norm.weight", 1, s.n_embd);
  if (!s.tied) add("output.weight", s.n_vocab, s.n_embd);
  return plan;
}

void require(bool ok, const std::string& message) {
  if (!ok) throw InvalidArgument(fmt::format("synthetic model: {}", message));
}

}  // namespace

SyntheticModelSpec SyntheticModelSpec::preset(std::string_view name) {
  struct Preset {
    std::string_view name;
    std::size_t n_layer, n_embd, n_head, n_head_kv, n_ff, n_vocab, n_ctx;
  };
  static constexpr Preset kPresets[] = {
      {"tiny", 2, 256, 4, 2, 512, 512, 512},
      {"small", 16, 1024, 16, 4, 2816, 32000, 2048},
      {"base", 22, 2048, 32, 4, 5632, 32000, 2048},
  };
  for (const Preset& p : kPresets) {
    if (p.name != name) continue;
    SyntheticModelSpec s;
    s.n_layer = p.n_layer;
    s.n_embd = p.n_embd;
    s.n_head = p.n_head;
    s.n_head_kv = p.n_head_kv;
    s.n_ff = p.n_ff;
    s.n_vocab = p.n_vocab;
    s.n_ctx = p.n_ctx;
    return s;
  }
  throw InvalidArgument(
      fmt::format("synthetic model: no preset '{}'; the presets are tiny, small and base", name));
}

void SyntheticModelSpec::validate() const {
  for (const auto& [value, field] :
       {std::pair{n_layer, "layers"}, std::pair{n_embd, "embd"}, std::pair{n_head, "heads"},
        std::pair{n_head_kv, "kv-heads"}, std::pair{n_ff, "ffn"}, std::pair{n_ctx, "ctx"}}) {
    require(value > 0, fmt::format("{} is 0; it must be positive", field));
  }
  require(n_vocab >= kMinVocab,
          fmt::format("a vocabulary of {} tokens; it needs at least {} (3 special, 256 bytes, "
                      "{} single characters)",
                      n_vocab, kMinVocab, kAlphabet));
  require(n_vocab <= static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()),
          fmt::format("a vocabulary of {} tokens does not fit token ids", n_vocab));
  require(n_embd % n_head == 0 && (n_embd / n_head) % 2 == 0,
          fmt::format("embd {} does not split into {} heads of an even size", n_embd, n_head));
  require(n_head % n_head_kv == 0,
          fmt::format("heads {} is not a multiple of kv-heads {}", n_head, n_head_kv));
  require(n_ctx <= std::numeric_limits<std::uint32_t>::max() &&
              n_embd <= std::numeric_limits<std::uint32_t>::max() &&
              n_ff <= std::numeric_limits<std::uint32_t>::max() && n_layer <= 1'000'000,
          "a size does not fit the file's u32 fields");
  for (const TensorPlan& t : tensor_plan(*this)) {
    const std::size_t block = quant::traits(t.type).block_values;
    // The k-quants take Q8_K activations, whose blocks are 256 wide whatever the weight block.
    const bool k_quant =
        t.type == TensorType::Q4_K || t.type == TensorType::Q5_K || t.type == TensorType::Q6_K;
    const std::size_t needed = k_quant ? 256 : block;
    require(t.cols % needed == 0, fmt::format("{} is {} wide; {} rows need a multiple of {}",
                                              t.name, t.cols, quant::name(t.type), needed));
    require(t.rows <= std::numeric_limits<std::uint64_t>::max() / t.cols,
            fmt::format("{} overflows", t.name));
  }
}

std::string SyntheticModelSpec::name() const {
  return fmt::format("brick-synthetic-{}x{}-{}{}-s{}", n_layer, n_embd, model::name(type),
                     tied ? "-tied" : "", seed);
}

std::uint64_t SyntheticModelSpec::parameters() const noexcept {
  std::uint64_t total = 0;
  for (const TensorPlan& t : tensor_plan(*this))
    total += static_cast<std::uint64_t>(t.rows) * t.cols;
  return total;
}

SyntheticVocab synthetic_vocab(std::size_t n_vocab, std::uint64_t seed) {
  if (n_vocab < kMinVocab) {
    throw InvalidArgument(
        fmt::format("synthetic vocabulary: {} tokens; at least {} are needed", n_vocab, kMinVocab));
  }
  SyntheticVocab v;
  v.pieces.reserve(n_vocab);
  const auto add = [&v](std::string piece, float score, TokenType type) {
    v.pieces.push_back(std::move(piece));
    v.scores.push_back(score);
    v.types.push_back(static_cast<std::int32_t>(type));
  };
  add("<unk>", 0.0f, TokenType::Unknown);
  add("<s>", 0.0f, TokenType::Control);
  add("</s>", 0.0f, TokenType::Control);
  for (int byte = 0; byte < 256; ++byte)
    add(fmt::format("<0x{:02X}>", byte), 0.0f, TokenType::Byte);

  std::vector<std::string> singles = {std::string(kSpace)};
  for (char c : kLetters) singles.emplace_back(1, c);
  for (char c : kOthers) singles.emplace_back(1, c);
  std::unordered_set<std::string> taken(singles.begin(), singles.end());
  // Pieces grow one frequent letter at a time from a piece already there (a word start "▁..." half
  // of the time), so every piece can be reached by merging pieces of the vocabulary.
  std::vector<std::string> merged;
  std::vector<std::string> word_starts = {std::string(kSpace)};
  std::vector<std::string> grown(singles.begin() + 1,
                                 singles.begin() + 1 + static_cast<long>(kLetters.size()));
  Rng rng(mix(seed ^ 0x766F636162ull));
  const std::size_t wanted = n_vocab - kSpecialTokens - singles.size();
  while (merged.size() < wanted) {
    const bool word_start = (rng.next() & 1) == 0;
    const std::vector<std::string>& from = word_start ? word_starts : grown;
    // Two draws, in this order on every compiler: the operands of + are unsequenced.
    const char letter = frequent_letter(rng);
    std::string piece = from[rng.below(from.size())] + letter;
    if (piece.size() > kMaxPieceBytes || !taken.insert(piece).second) continue;
    (word_start ? word_starts : grown).push_back(piece);
    merged.push_back(std::move(piece));
  }
  float score = 0.0f;
  for (std::string& piece : merged) add(std::move(piece), score -= 1.0f, TokenType::Normal);
  for (std::string& piece : singles) add(std::move(piece), score -= 1.0f, TokenType::Normal);
  return v;
}

gguf::GgufWriter synthetic_model_writer(const SyntheticModelSpec& s) {
  s.validate();
  gguf::Metadata m;
  const auto u32 = [](std::size_t value) { return static_cast<std::uint32_t>(value); };
  m.set("general.architecture", "llama");
  m.set("general.name", s.name());
  m.set("general.file_type", u32(static_cast<std::uint32_t>(s.type)));
  m.set("general.quantization_version", u32(2));
  m.set("llama.context_length", u32(s.n_ctx));
  m.set("llama.embedding_length", u32(s.n_embd));
  m.set("llama.block_count", u32(s.n_layer));
  m.set("llama.feed_forward_length", u32(s.n_ff));
  m.set("llama.attention.head_count", u32(s.n_head));
  m.set("llama.attention.head_count_kv", u32(s.n_head_kv));
  m.set("llama.rope.dimension_count", u32(s.n_embd / s.n_head));
  m.set("llama.rope.freq_base", 10000.0f);
  m.set("llama.attention.layer_norm_rms_epsilon", 1e-5f);
  m.set("llama.vocab_size", u32(s.n_vocab));
  SyntheticVocab vocab = synthetic_vocab(s.n_vocab, s.seed);
  m.set("tokenizer.ggml.model", "llama");
  m.set("tokenizer.ggml.tokens", gguf::Array{std::move(vocab.pieces)});
  m.set("tokenizer.ggml.scores", gguf::Array{std::move(vocab.scores)});
  m.set("tokenizer.ggml.token_type", gguf::Array{std::move(vocab.types)});
  m.set("tokenizer.ggml.bos_token_id", u32(1));
  m.set("tokenizer.ggml.eos_token_id", u32(2));
  m.set("tokenizer.ggml.unknown_token_id", u32(0));
  m.set("tokenizer.ggml.add_bos_token", true);
  m.set("tokenizer.ggml.add_eos_token", false);
  gguf::GgufWriter writer(std::move(m));
  for (const TensorPlan& t : tensor_plan(s)) {
    if (t.norm) {
      writer.add_tensor(t.name, t.type, {t.cols});
    } else {
      writer.add_tensor(t.name, t.type, {t.cols, t.rows});
    }
  }
  return writer;
}

void write_synthetic_model(const SyntheticModelSpec& s, const std::filesystem::path& path,
                           ThreadPool& pool, const gguf::GgufWriter::Progress& progress) {
  const gguf::GgufWriter writer = synthetic_model_writer(s);
  const std::vector<TensorPlan> plan = tensor_plan(s);
  constexpr std::size_t kRowsPerChunk = 16;
  writer.write(
      path,
      [&](std::size_t index, std::span<std::byte> out) {
        const TensorPlan& t = plan[index];
        const std::size_t row_bytes = out.size() / t.rows;
        pool.parallel_for(t.rows, [&](Range range, std::size_t) {
          thread_local std::vector<float> values;
          for (std::size_t first = range.begin; first < range.end; first += kRowsPerChunk) {
            const std::size_t count = std::min(kRowsPerChunk, range.end - first);
            values.resize(count * t.cols);
            for (std::size_t r = 0; r < count; ++r) {
              Rng rng(mix(s.seed ^ mix((static_cast<std::uint64_t>(index) << 32) + first + r)));
              draw_normal(rng, t.norm ? 1.0f : 0.0f, t.norm ? 0.1f : 0.02f,
                          std::span(values).subspan(r * t.cols, t.cols));
            }
            quant::quantize(t.type, values, t.cols,
                            out.subspan(first * row_bytes, count * row_bytes));
          }
        });
      },
      progress);
}

}  // namespace brick::model
