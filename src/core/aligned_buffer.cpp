#include "core/aligned_buffer.h"

#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace strata {

AlignedBuffer::AlignedBuffer(size_t bytes) : size_(bytes) {
    if (bytes == 0) return;
    size_t alignment = bytes >= kHugePage ? kHugePage : kSimdAlignment;
    size_t rounded = (bytes + alignment - 1) / alignment * alignment;
    data_ = static_cast<uint8_t*>(std::aligned_alloc(alignment, rounded));
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
        std::free(data_);
        data_ = std::exchange(other.data_, nullptr);
        size_ = std::exchange(other.size_, 0);
    }
    return *this;
}

AlignedBuffer::~AlignedBuffer() { std::free(data_); }

}  // namespace strata
