// Scratch program (not built by the project): the bandwidth probe's AVX2 read loop, plain and with a
// software prefetch 2 or 4 KiB ahead, on THREADS threads over 1 GiB, best of 2 passes, 4 rounds.
// Built with g++ -O2 -mavx2 -std=c++20 probe_prefetch.cpp -lpthread; run as `probe_prefetch THREADS`.
#include <immintrin.h>
#include <chrono>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <cstdlib>
#include <thread>
#include <vector>
template <int PF>
uint64_t sum(const uint8_t* p, uint64_t bytes) {
  __m256i acc[8]; for (auto& a : acc) a = _mm256_setzero_si256();
  const uint64_t n = bytes / 256;
  for (uint64_t i = 0; i < n; ++i) {
    const auto* v = reinterpret_cast<const __m256i*>(p + i * 256);
    if (PF) { __builtin_prefetch(p + i * 256 + PF, 0, 3); __builtin_prefetch(p + i * 256 + PF + 64, 0, 3); __builtin_prefetch(p + i * 256 + PF + 128, 0, 3); __builtin_prefetch(p + i * 256 + PF + 192, 0, 3); }
    for (int k = 0; k < 8; ++k) acc[k] = _mm256_add_epi64(acc[k], _mm256_loadu_si256(v + k));
  }
  __m256i s = acc[0]; for (int k = 1; k < 8; ++k) s = _mm256_add_epi64(s, acc[k]);
  alignas(32) uint64_t l[4]; _mm256_store_si256((__m256i*)l, s); return l[0] + l[1] + l[2] + l[3];
}
int main(int argc, char** argv) {
  const int threads = argc > 1 ? atoi(argv[1]) : 2; const uint64_t total = 1ull << 30, slice = total / threads;
  uint8_t* buf = (uint8_t*)aligned_alloc(1 << 21, total); memset(buf, 1, total);
  uint64_t (*fns[3])(const uint8_t*, uint64_t) = {sum<0>, sum<2048>, sum<4096>};
  const char* names[3] = {"plain", "pf 2 KiB", "pf 4 KiB"};
  volatile uint64_t sink = 0;
  for (int round = 0; round < 4; ++round) {
    for (int f = 0; f < 3; ++f) {
      double best = 0;
      for (int pass = 0; pass < 2; ++pass) {
        auto t0 = std::chrono::steady_clock::now();
        std::vector<std::thread> ts; std::vector<uint64_t> out(threads);
        for (int t = 0; t < threads; ++t) ts.emplace_back([&, t] { out[t] = fns[f](buf + t * slice, slice); });
        for (auto& t : ts) t.join();
        double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        best = std::max(best, total / s / 1e9); for (auto o : out) sink += o;
      }
      printf("%s %.1f GB/s   ", names[f], best);
    }
    printf("\n");
  }
}
