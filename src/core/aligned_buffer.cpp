#include "core/aligned_buffer.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

#if defined(__linux__)
#include <sys/mman.h>
#endif
#if defined(_WIN32)
#include <malloc.h>
#endif

namespace strata {

namespace {
// The C runtime of Windows has no aligned_alloc; its _aligned_malloc needs its own free.
void* allocate_aligned(size_t alignment, size_t bytes) {
#if defined(_WIN32)
    return _aligned_malloc(bytes, alignment);
#else
    return std::aligned_alloc(alignment, bytes);
#endif
}
void free_aligned(void* p) {
#if defined(_WIN32)
    _aligned_free(p);
#else
    std::free(p);
#endif
}
}  // namespace

AlignedBuffer::AlignedBuffer(size_t bytes, size_t min_alignment) : size_(bytes) {
    if (bytes == 0) return;
    size_t alignment = std::max(bytes >= kHugePage ? kHugePage : kSimdAlignment, min_alignment);
    size_t rounded = (bytes + alignment - 1) / alignment * alignment;
    data_ = static_cast<uint8_t*>(allocate_aligned(alignment, rounded));
    if (!data_) throw std::bad_alloc();
#if defined(__linux__)
    if (alignment == kHugePage) madvise(data_, rounded, MADV_HUGEPAGE);
#endif
    std::memset(data_, 0, rounded);
}

AlignedBuffer::AlignedBuffer(AlignedBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

AlignedBuffer& AlignedBuffer::operator=(AlignedBuffer&& other) noexcept {
    if (this != &other) {
        free_aligned(data_);
        data_ = std::exchange(other.data_, nullptr);
        size_ = std::exchange(other.size_, 0);
    }
    return *this;
}

AlignedBuffer::~AlignedBuffer() { free_aligned(data_); }

}  // namespace strata
