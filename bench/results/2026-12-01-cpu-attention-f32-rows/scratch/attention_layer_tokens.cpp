// Scratch program (not built by the project): one layer of CPU attention for TOKENS tokens after
// DEPTH positions (32 query heads, 4 kv heads of 128; an f16 cache, or f32 or q8_0 with a 4th
// argument "f32" or "q8"), timed per call. Built from the repository root with
// g++ -O2 -std=c++20 -Isrc attention_layer_tokens.cpp build/lib/libstrata_engine.a -lfmt -lpthread;
// run as `attention_layer_tokens DEPTH THREADS [TOKENS] [f32|q8]`.
#include <chrono>
#include <string>
#include <cstdio>
#include <random>
#include <vector>
#include "backend/cpu/attention.h"
#include "core/thread_pool.h"
using namespace strata;
int main(int argc, char** argv) {
  const int64_t depth = argc > 1 ? atoi(argv[1]) : 4096; const int threads = argc > 2 ? atoi(argv[2]) : 2; const int64_t toks = argc > 3 ? atoi(argv[3]) : 1;
  AttentionParams p{32, 4, 128, 128, 0.088f};
  KvCache kv(1, depth + toks, 4 * 128, 4 * 128, (argc > 4 && std::string(argv[4]) == "f32" ? KvCacheType::F32 : argc > 4 && std::string(argv[4]) == "q8" ? KvCacheType::Q8_0 : KvCacheType::F16));
  std::mt19937 rng(1); std::normal_distribution<float> nd;
  std::vector<float> k(512), v(512);
  for (int64_t j = 0; j < depth + toks; ++j) { for (auto& x : k) x = nd(rng); for (auto& x : v) x = nd(rng); kv.store(0, j, k.data(), v.data()); }
  std::vector<float> q(toks * 32 * 128), out(toks * 32 * 128); for (auto& x : q) x = nd(rng);
  ThreadPool pool(ThreadPool::Options{.threads = threads}); CpuContext ctx(pool);
  for (int rep = 0; rep < 3; ++rep) {
    auto t0 = std::chrono::steady_clock::now(); const int N = toks > 1 ? 10 : 200;
    for (int i = 0; i < N; ++i) cpu_attention(q.data(), kv, 0, toks, depth, p, out.data(), ctx);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / N;
    printf("depth %ld, %d threads: %.3f ms a layer, %.1f cycles per (row, head) per thread\n", depth, threads, s * 1e3, s * 2.85e9 * threads / (32.0 * (depth + 1) * toks));
  }
}
