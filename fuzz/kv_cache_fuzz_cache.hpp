#pragma once
// The cache the KV-cache fuzz target restores into and the seed generator saves from: small, so a
// whole file is a few hundred bytes and libFuzzer mutates every part of it.
#include "brick/runtime/kv_cache/kv_cache.hpp"

namespace brick::fuzz {

inline KvCacheShape fuzz_cache_shape(KvType type) {
  return KvCacheShape{.n_layers = 2, .n_cells = 8, .n_kv_heads = 1, .head_dim = 4, .type = type};
}

}  // namespace brick::fuzz
