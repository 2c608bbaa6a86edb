#pragma once
// A heap buffer aligned for SIMD loads and huge pages. Buffers of 2 MiB or more are aligned to
// 2 MiB so the kernel can back them with transparent huge pages (fewer TLB misses when the CPU
// streams expert weights).
//
//   AlignedBuffer buf(n_bytes);         // zero-filled
//   float* x = buf.as<float>();

#include <cstddef>
#include <cstdint>

namespace strata {

class AlignedBuffer {
public:
    static constexpr size_t kSimdAlignment = 64;
    static constexpr size_t kHugePage = size_t(2) << 20;

    AlignedBuffer() = default;
    // `min_alignment` (a power of two) raises the alignment, e.g. to a disk sector for O_DIRECT.
    explicit AlignedBuffer(size_t bytes, size_t min_alignment = 0);
    AlignedBuffer(AlignedBuffer&& other) noexcept;
    AlignedBuffer& operator=(AlignedBuffer&& other) noexcept;
    AlignedBuffer(const AlignedBuffer&) = delete;
    AlignedBuffer& operator=(const AlignedBuffer&) = delete;
    ~AlignedBuffer();

    uint8_t* data() { return data_; }
    const uint8_t* data() const { return data_; }
    size_t size() const { return size_; }
    template <typename T>
    T* as() { return reinterpret_cast<T*>(data_); }
    template <typename T>
    const T* as() const { return reinterpret_cast<const T*>(data_); }

private:
    uint8_t* data_ = nullptr;
    size_t size_ = 0;
};

}  // namespace strata
