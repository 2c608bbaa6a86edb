// POSIX implementation of core/mapped_file.h.
#if !defined(_WIN32)
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "core/mapped_file.h"

namespace strata {

namespace {
// The file open for reading, and its size; an error naming the path for a missing file or a
// directory (`what`: "map" or "read").
Result<int> open_regular_file(const std::string& path, const char* what, uint64_t* size) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return Status::error("cannot open {}: {} (check the path and that the file is readable)", path,
                             std::strerror(errno));
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
        ::close(fd);
        return Status::error("cannot {} {}: expected a regular file", what, path);
    }
    *size = static_cast<uint64_t>(st.st_size);
    return fd;
}
}  // namespace

Result<MappedFile> MappedFile::map(const std::string& path) {
    MappedFile m;
    STRATA_ASSIGN_OR_RETURN(const int fd, open_regular_file(path, "map", &m.size_));
    m.path_ = path;
    if (m.size_ > 0) {
        void* p = ::mmap(nullptr, static_cast<size_t>(m.size_), PROT_READ, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED) {
            int err = errno;
            ::close(fd);
            return Status::error("cannot map {} ({} bytes): {}", path, m.size_, std::strerror(err));
        }
        m.data_ = static_cast<const uint8_t*>(p);
    }
    ::close(fd);  // the mapping keeps the file alive
    return m;
}

Result<MappedFile> MappedFile::read_into_memory(const std::string& path,
                                                const std::function<void(uint64_t, uint64_t)>& progress) {
    MappedFile m;
    STRATA_ASSIGN_OR_RETURN(const int fd, open_regular_file(path, "read", &m.size_));
    m.path_ = path;
    constexpr uint64_t kHugePage = uint64_t(2) << 20;
    m.reserved_ = std::max<uint64_t>(kHugePage, (m.size_ + kHugePage - 1) / kHugePage * kHugePage);
    // One huge page more than needed, so the start can be aligned to one.
    const uint64_t span = m.reserved_ + kHugePage;
    void* raw = ::mmap(nullptr, static_cast<size_t>(span), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) {
        const int err = errno;
        ::close(fd);
        return Status::error("cannot reserve {} bytes of RAM to load {} into: {} (use --load mmap)", span, path,
                             std::strerror(err));
    }
    auto* base = static_cast<uint8_t*>(raw);
    auto* aligned = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(base) + kHugePage - 1) / kHugePage * kHugePage);
    if (aligned > base) ::munmap(base, static_cast<size_t>(aligned - base));
    const uint64_t tail = static_cast<uint64_t>(base + span - (aligned + m.reserved_));
    if (tail > 0) ::munmap(aligned + m.reserved_, static_cast<size_t>(tail));
#if defined(MADV_HUGEPAGE)
    ::madvise(aligned, static_cast<size_t>(m.reserved_), MADV_HUGEPAGE);  // a hint: fine if refused
#endif
    constexpr uint64_t kChunk = uint64_t(64) << 20;
    for (uint64_t done = 0; done < m.size_;) {
        const uint64_t want = std::min(kChunk, m.size_ - done);
        const ssize_t got = ::pread(fd, aligned + done, static_cast<size_t>(want), static_cast<off_t>(done));
        if (got <= 0) {
            const int err = got < 0 ? errno : EIO;
            if (got < 0 && err == EINTR) continue;
            ::munmap(aligned, static_cast<size_t>(m.reserved_));
            ::close(fd);
            return Status::error("reading {} at byte {}: {}", path, done, got < 0 ? std::strerror(err) : "unexpected end of file");
        }
#if defined(POSIX_FADV_DONTNEED)
        ::posix_fadvise(fd, static_cast<off_t>(done), static_cast<off_t>(got), POSIX_FADV_DONTNEED);  // one copy in RAM
#endif
        done += static_cast<uint64_t>(got);
        if (progress) progress(done, m.size_);
    }
    ::close(fd);
    ::mprotect(aligned, static_cast<size_t>(m.reserved_), PROT_READ);
    m.data_ = aligned;
    return m;
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(other.data_), size_(other.size_), reserved_(other.reserved_), path_(std::move(other.path_)) {
    other.data_ = nullptr;
    other.size_ = 0;
    other.reserved_ = 0;
}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
    if (this != &other) {
        release();
        data_ = other.data_;
        size_ = other.size_;
        reserved_ = other.reserved_;
        path_ = std::move(other.path_);
        other.data_ = nullptr;
        other.size_ = 0;
        other.reserved_ = 0;
    }
    return *this;
}

MappedFile::~MappedFile() { release(); }

void MappedFile::release() {
    if (data_) ::munmap(const_cast<uint8_t*>(data_), static_cast<size_t>(reserved_ ? reserved_ : size_));
    data_ = nullptr;
    size_ = 0;
    reserved_ = 0;
}

void MappedFile::will_need(uint64_t offset, uint64_t n) const {
    if (!data_ || offset >= size_) return;
    if (n > size_ - offset) n = size_ - offset;
    long page = ::sysconf(_SC_PAGESIZE);
    uint64_t start = offset / static_cast<uint64_t>(page) * static_cast<uint64_t>(page);
    ::madvise(const_cast<uint8_t*>(data_) + start, static_cast<size_t>(offset + n - start), MADV_WILLNEED);
}

}  // namespace strata
#endif  // !_WIN32
