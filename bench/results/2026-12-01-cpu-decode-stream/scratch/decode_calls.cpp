// Scratch program (not built by the project): the matmul calls of a decode step of the 8-layer
// synthetic Qwen3-30B-A3B (q/k/v, o, 8 of 16 experts' gate+up, their down, the head; random
// quants), 2 threads, each variant timed between two passes of the bandwidth probe, 24 rounds of
// 8 tokens, variants alternated. Also a static half split of one 330 MiB Q4_K matrix with the
// 2 KiB window ("stream"), cpu_matmul on that matrix ("big-*"), and a token's calls merged into
// one grouped call ("onecall", a bound on what fewer calls could give). The old/new switches
// (g_x_cap: 64-row claims, g_x_nonext: no prefetch into the next run) existed only in the
// experiment build of backend/cpu/matmul.cpp and were removed with it. Built from the
// repository root with
//   g++ -O2 -std=c++20 -mavx2 -mfma -mf16c -Isrc decode_calls.cpp build/lib/libstrata_engine.a -lpthread
// and run as `decode_calls "big-old big-new old uncapped new"` (the stream is always run).
#include <sys/mman.h>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <random>
#include <vector>
#include <string>
#include "backend/cpu/matmul.h"
#include "core/thread_pool.h"
#include "runtime/memory_bandwidth_kernels.h"
#include "quant/traits.h"
#include "quant/cpu/dot_kernels.h"
namespace strata { extern int g_x_cap, g_x_nonext; }
using namespace strata;
static double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
static uint8_t* big(size_t n) { uint8_t* p = (uint8_t*)aligned_alloc(2 << 20, (n + (2<<20)) / (2<<20) * (2<<20)); madvise(p, n, MADV_HUGEPAGE); return p; }
std::mt19937 rng(7);
Weight make(TensorType t, int64_t nin, int64_t nout, int64_t nmat) {
  Weight w; w.type = t; w.ne[0] = nin; w.ne[1] = nout; w.ne[2] = nmat; w.row_bytes = tensor_type_info(t)->row_bytes(nin);
  size_t n = w.row_bytes * nout * nmat; uint8_t* p = big(n);
  // random quants; every 2-byte fp16 word kept small and finite so nothing is NaN (speed is what counts)
  for (size_t i = 0; i < n; i += 2) { uint16_t h = 0x2000 | (rng() & 0x0fff); memcpy(p + i, &h, 2); }
  w.data = p; return w;
}
int main(int argc, char** argv) {
  const int L = 8, E = 16, K = 8;
  struct Layer { Weight q, k, v, o, gate, up, down; };
  std::vector<Layer> layers;
  for (int l = 0; l < L; ++l) layers.push_back({make(TensorType::Q4_K,2048,4096,1), make(TensorType::Q4_K,2048,512,1), make(TensorType::Q6_K,2048,512,1),
     make(TensorType::Q4_K,4096,2048,1), make(TensorType::Q4_K,2048,768,E), make(TensorType::Q4_K,2048,768,E), make(TensorType::Q6_K,768,2048,E)});
  Weight head = make(TensorType::Q6_K, 2048, 32000, 1);
  uint64_t per_token = head.row_bytes * 32000;
  for (auto& ly : layers) per_token += ly.q.row_bytes*4096 + ly.k.row_bytes*512 + ly.v.row_bytes*512 + ly.o.row_bytes*2048 + K*(2*ly.gate.row_bytes*768 + ly.down.row_bytes*2048);
  std::vector<float> x(4096, 0.01f), q(4096), kk(512), vv(512), h(2048), g(K*768), u(K*768), d(K*2048), logits(32000);
  for (auto& v : x) v = (rng() % 1000) / 500.0f - 1;
  int spin = argc > 2 ? atoi(argv[2]) : 0;
  ThreadPool pool(ThreadPool::Options{.threads = 2, .spin_us = spin});
  CpuContext ctx(pool);
  const uint64_t probe_bytes = uint64_t(1) << 30; uint8_t* pb = big(probe_bytes); memset(pb, 1, probe_bytes);
  auto probe = [&] { std::vector<uint64_t> s(2); double t0 = now();
    pool.parallel_for(2, [&](int64_t a, int64_t b, int) { for (int64_t t = a; t < b; ++t) s[t] = sum_words_avx2(pb + t * (probe_bytes/2), probe_bytes/2); });
    return probe_bytes / (now() - t0) / 1e9; };
  double cat_t[5] = {0}; uint64_t cat_b[5] = {0};
  auto timed = [&](int c, uint64_t b, auto&& f) { double t0 = now(); f(); cat_t[c] += now() - t0; cat_b[c] += b; };
  auto token = [&] {
    for (auto& ly : layers) {
      MatmulJob a[3] = {{&ly.q,0,x.data(),1,q.data()},{&ly.k,0,x.data(),1,kk.data()},{&ly.v,0,x.data(),1,vv.data()}};
      timed(0, ly.q.row_bytes*4096 + ly.k.row_bytes*512 + ly.v.row_bytes*512, [&]{ cpu_matmul_grouped(a, ctx); });
      timed(1, ly.o.row_bytes*2048, [&]{ cpu_matmul(ly.o, 0, q.data(), 1, h.data(), ctx); });
      std::vector<MatmulJob> gu; std::vector<MatmulJob> dn;
      int ex[K]; for (int k = 0; k < K; ++k) { again: ex[k] = rng() % E; for (int j = 0; j < k; ++j) if (ex[j]==ex[k]) goto again; }
      for (int k = 0; k < K; ++k) { gu.push_back({&ly.gate, ex[k], x.data(), 1, g.data()+k*768}); gu.push_back({&ly.up, ex[k], x.data(), 1, u.data()+k*768}); }
      timed(2, K*2*ly.gate.row_bytes*768, [&]{ cpu_matmul_grouped(gu, ctx); });
      for (int k = 0; k < K; ++k) dn.push_back({&ly.down, ex[k], g.data()+k*768, 1, d.data()+k*2048});
      timed(3, K*ly.down.row_bytes*2048, [&]{ cpu_matmul_grouped(dn, ctx); });
    }
    timed(4, head.row_bytes*32000, [&]{ cpu_matmul(head, 0, x.data(), 1, logits.data(), ctx); });
  };
  const int64_t brows = 300000; Weight bw = make(TensorType::Q4_K, 2048, brows, 1); std::vector<float> by(brows);
  std::vector<uint8_t> act(tensor_type_info(TensorType::Q8_K)->row_bytes(2048));
  quant_traits(TensorType::Q8_K).quantize_row(x.data(), act.data(), 2048);
  DotFn dotk = cpu_dot_kernel(TensorType::Q4_K);
  auto manual = [&] { pool.parallel_for(2, [&](int64_t a, int64_t b, int) {
      for (int64_t t = a; t < b; ++t) { const int64_t r0 = brows / 2 * t, r1 = brows / 2 * (t + 1); const uint8_t* end = bw.data + r1 * 1152;
        for (int64_t r = r0; r < r1; ++r) { const uint8_t* row = bw.data + r * 1152; const uint8_t* pa = row + 2048;
          if (pa < end) for (const uint8_t* l = pa; l < std::min(end, pa + 1152); l += 64) __builtin_prefetch(l, 0, 3);
          by[r] = dotk(row, act.data(), 2048); } } }); };
  auto token_one_call = [&] {
    std::vector<MatmulJob> all;
    for (auto& ly : layers) {
      all.push_back({&ly.q,0,x.data(),1,q.data()}); all.push_back({&ly.k,0,x.data(),1,kk.data()}); all.push_back({&ly.v,0,x.data(),1,vv.data()});
      all.push_back({&ly.o, 0, q.data(), 1, h.data()});
      int ex[K]; for (int k = 0; k < K; ++k) { again2: ex[k] = rng() % E; for (int j = 0; j < k; ++j) if (ex[j]==ex[k]) goto again2; }
      for (int k = 0; k < K; ++k) { all.push_back({&ly.gate, ex[k], x.data(), 1, g.data()+k*768}); all.push_back({&ly.up, ex[k], x.data(), 1, u.data()+k*768}); }
      for (int k = 0; k < K; ++k) all.push_back({&ly.down, ex[k], g.data()+k*768, 1, d.data()+k*2048});
    }
    all.push_back({&head, 0, x.data(), 1, logits.data()});
    cpu_matmul_grouped(all, ctx);
  };
  struct V { std::string name; int hint, claim, window; int mode = 0; };
  std::vector<V> vs = {{"stream",0,0,-1,1},{"big-old",1,1,-1,2},{"big-old",1,1,-1,2},{"big-new",0,0,-1,2},{"old",1,1,-1},{"uncapped",0,1,-1},{"new",0,0,-1}};
  if (argc > 1 && strcmp(argv[1], "all")) { std::vector<V> keep; for (auto& v : vs) if (v.name=="stream" || strstr(argv[1], v.name.c_str())) keep.push_back(v); vs = keep; }
  printf("weights per token %.1f MB\n", per_token / 1e6);
  for (int i = 0; i < 3; ++i) token();
  std::vector<std::vector<double>> ratio(vs.size()), gbs(vs.size());
  const int tokens = 8;
  for (int round = 0; round < 24; ++round) {
    for (size_t vi = 0; vi < vs.size(); ++vi) {
      g_x_cap = vs[vi].hint; g_x_nonext = vs[vi].claim;
      double p1 = probe();
      double t0 = now(); double dt; uint64_t moved = per_token * tokens;
      if (vs[vi].mode == 1) { manual(); moved = bw.row_bytes * brows; }
      else if (vs[vi].mode == 2) { cpu_matmul(bw, 0, x.data(), 1, by.data(), ctx); moved = bw.row_bytes * brows; }
      else if (vs[vi].mode == 3) for (int t = 0; t < tokens; ++t) token_one_call();
      else for (int t = 0; t < tokens; ++t) token();
      dt = now() - t0;
      double p2 = probe();
      double rate = moved / dt / 1e9;
      gbs[vi].push_back(rate); ratio[vi].push_back(rate / std::max(p1, p2));
    }
  }
  const char* cn[5] = {"qkv","o","gate+up","down","head"};
  for (int c = 0; c < 5; ++c) printf("%-8s %7.1f MB/token  %6.2f GB/s  %5.1f%% of time\n", cn[c], cat_b[c]/1e6/ (8*tokens*vs.size()+3), cat_b[c]/cat_t[c]/1e9, 100*cat_t[c]/(cat_t[0]+cat_t[1]+cat_t[2]+cat_t[3]+cat_t[4]));
  for (size_t vi = 0; vi < vs.size(); ++vi) {
    auto r = ratio[vi]; std::sort(r.begin(), r.end()); auto gsv = gbs[vi]; std::sort(gsv.begin(), gsv.end());
    double mean = 0; for (double v : r) mean += v; mean /= r.size();
    printf("%-18s GB/s median %6.2f   ratio to adjacent probe: median %.3f mean %.3f  min %.3f max %.3f\n", vs[vi].name.c_str(), gsv[gsv.size()/2], r[r.size()/2], mean, r[0], r.back());
  }
}
