// Scratch program (not built by the project): the f16 row kernels (dots, accumulate) on 64 rows of
// 128 halves in L1, cycles a row at 2.85 GHz (the development VM's clock, from a dependent-add
// loop). Built like attention_layer.cpp.
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>
#include "backend/cpu/f16_rows.h"
#include "core/fp16.h"
using namespace strata;
int main() {
  const F16RowKernels& k = f16_row_kernels();
  const int64_t n = 128, stride = 512, rows = 64;
  std::vector<uint16_t> r(rows * stride); std::mt19937 rng(1); std::normal_distribution<float> nd;
  for (auto& h : r) h = fp32_to_fp16(nd(rng));
  std::vector<float> q(n), out(rows), o(n); for (auto& x : q) x = nd(rng); for (auto& x : out) x = std::abs(nd(rng)) * 0.01f;
  for (int rep = 0; rep < 3; ++rep) {
    auto t0 = std::chrono::steady_clock::now(); const long N = 200000;
    for (long i = 0; i < N; ++i) k.dots(q.data(), r.data(), stride, rows, n, 0.1f, out.data());
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    auto t1 = std::chrono::steady_clock::now();
    for (long i = 0; i < N; ++i) k.accumulate(out.data(), 1e-3f, r.data(), stride, rows, n, o.data());
    double s2 = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
    printf("dots %.1f cycles/row, accumulate %.1f cycles/row (L1)\n", s * 2.85e9 / N / rows, s2 * 2.85e9 / N / rows);
  }
}
