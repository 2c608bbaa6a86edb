// Scratch program (not built by the project): the f16 and f32 row kernels on 32 rows of 128 in L1,
// cycles a row at 2.85 GHz. Built like attention_layer_tokens.cpp.
#include <chrono>
#include <cstdio>
#include <cmath>
#include <random>
#include <vector>
#include "backend/cpu/f16_rows.h"
#include "backend/cpu/f32_rows.h"
#include "core/fp16.h"
using namespace strata;
template <class F> double cyc(F f, long N, int rows) {
  auto t0 = std::chrono::steady_clock::now(); for (long i = 0; i < N; ++i) f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() * 2.85e9 / N / rows;
}
int main() {
  const F16RowKernels& k = f16_row_kernels(); const F32RowKernels& k32 = f32_row_kernels();
  const int64_t n = 128, stride = 512, rows = 32;
  std::vector<uint16_t> r(rows * stride); std::mt19937 rng(1); std::normal_distribution<float> nd;
  for (auto& h : r) h = fp32_to_fp16(nd(rng));
  std::vector<float> w(rows * n);
  const auto widen = [&] { for (int64_t i = 0; i < rows; ++i) for (int64_t d = 0; d < n; ++d) w[i * n + d] = fp16_to_fp32(r[i * stride + d]); };
  widen();
  std::vector<float> q(n), out(rows), o(n); for (auto& x : q) x = nd(rng); for (auto& x : out) x = std::abs(nd(rng)) * 0.01f;
  for (int rep = 0; rep < 3; ++rep) {
    const long N = 200000;
    double a = cyc([&]{ k.dots(q.data(), r.data(), stride, rows, n, 0.1f, out.data()); }, N, rows);
    double b = cyc([&]{ k.accumulate(out.data(), 1e-3f, r.data(), stride, rows, n, o.data()); }, N, rows);
    double c = cyc([&]{ k32.dots(q.data(), w.data(), n, rows, n, 0.1f, out.data()); }, N, rows);
    double d = cyc([&]{ k32.accumulate(out.data(), 1e-3f, w.data(), n, rows, n, o.data()); }, N, rows);
    printf("f16 dots %.1f acc %.1f | f32 dots %.1f acc %.1f cycles/row\n", a, b, c, d);
  }
}
