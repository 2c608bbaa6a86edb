#include "quant/float_types.h"

#include <cstring>

#include "core/fp16.h"

namespace strata {

void dequantize_row_f32(const void* src, float* dst, int64_t n) {
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
}

void dequantize_row_f16(const void* src, float* dst, int64_t n) {
    const auto* h = static_cast<const uint16_t*>(src);
    for (int64_t i = 0; i < n; ++i) dst[i] = fp16_to_fp32(h[i]);
}

void dequantize_row_bf16(const void* src, float* dst, int64_t n) {
    const auto* h = static_cast<const uint16_t*>(src);
    for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_fp32(h[i]);
}

void quantize_row_f32(const float* src, void* dst, int64_t n) {
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
}

void quantize_row_f16(const float* src, void* dst, int64_t n) {
    auto* h = static_cast<uint16_t*>(dst);
    for (int64_t i = 0; i < n; ++i) h[i] = fp32_to_fp16(src[i]);
}

void quantize_row_bf16(const float* src, void* dst, int64_t n) {
    auto* h = static_cast<uint16_t*>(dst);
    for (int64_t i = 0; i < n; ++i) h[i] = fp32_to_bf16(src[i]);
}

float dot_f32(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const float*>(weights);
    const auto* a = static_cast<const float*>(activation);
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(w[i] * a[i]);
    return static_cast<float>(sum);
}

float dot_f16(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const uint16_t*>(weights);
    const auto* a = static_cast<const uint16_t*>(activation);
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(fp16_to_fp32(w[i]) * fp16_to_fp32(a[i]));
    return static_cast<float>(sum);
}

float dot_bf16(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const uint16_t*>(weights);
    const auto* a = static_cast<const uint16_t*>(activation);
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(bf16_to_fp32(w[i]) * bf16_to_fp32(a[i]));
    return static_cast<float>(sum);
}

}  // namespace strata
