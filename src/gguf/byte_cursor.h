#pragma once
// A bounds-checked little-endian reader over a byte range. Every read says what it was reading,
// so a truncated or corrupted file is reported as "tensor info 12 (name): expected 8 bytes for
// the offset at byte 4096, got 3 before the end of the file".

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "core/status.h"

static_assert(std::endian::native == std::endian::little, "GGUF is little-endian; big-endian hosts are not supported");

namespace strata {

class ByteCursor {
public:
    ByteCursor(const uint8_t* data, uint64_t size) : data_(data), size_(size) {}

    uint64_t position() const { return pos_; }
    uint64_t remaining() const { return size_ - pos_; }

    template <typename T>
    Status read(T* out, std::string_view what) {
        static_assert(std::is_trivially_copyable_v<T>);
        if (remaining() < sizeof(T)) return truncated(sizeof(T), what);
        std::memcpy(out, data_ + pos_, sizeof(T));
        pos_ += sizeof(T);
        return Status::ok();
    }

    // A GGUF string: u64 length, then that many bytes (not NUL-terminated).
    Status read_string(std::string* out, uint64_t max_bytes, std::string_view what) {
        uint64_t n = 0;
        STRATA_TRY(read(&n, what));
        if (n > max_bytes) {
            return Status::error("{}: expected a string of at most {} bytes, got a length of {} at byte {}", what,
                                 max_bytes, n, pos_ - 8);
        }
        if (n > remaining()) return truncated(n, what);
        out->assign(reinterpret_cast<const char*>(data_ + pos_), static_cast<size_t>(n));
        pos_ += n;
        return Status::ok();
    }

    Status skip_to(uint64_t position, std::string_view what) {
        if (position > size_) return truncated(position - pos_, what);
        pos_ = position;
        return Status::ok();
    }

private:
    Status truncated(uint64_t wanted, std::string_view what) const {
        return Status::error("{}: expected {} bytes at byte {}, got {} before the end of the file (is it truncated?)",
                             what, wanted, pos_, remaining());
    }

    const uint8_t* data_;
    uint64_t size_;
    uint64_t pos_ = 0;
};

}  // namespace strata
