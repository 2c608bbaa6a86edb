// POSIX implementation of core/mapped_file.h.
#if !defined(_WIN32)
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/mapped_file.h"

namespace strata {

Result<MappedFile> MappedFile::map(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return Status::error("cannot open {}: {} (check the path and that the file is readable)", path,
                             std::strerror(errno));
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
        ::close(fd);
        return Status::error("cannot map {}: expected a regular file", path);
    }
    MappedFile m;
    m.path_ = path;
    m.size_ = static_cast<uint64_t>(st.st_size);
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

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(other.data_), size_(other.size_), path_(std::move(other.path_)) {
    other.data_ = nullptr;
    other.size_ = 0;
}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
    if (this != &other) {
        release();
        data_ = other.data_;
        size_ = other.size_;
        path_ = std::move(other.path_);
        other.data_ = nullptr;
        other.size_ = 0;
    }
    return *this;
}

MappedFile::~MappedFile() { release(); }

void MappedFile::release() {
    if (data_) ::munmap(const_cast<uint8_t*>(data_), static_cast<size_t>(size_));
    data_ = nullptr;
    size_ = 0;
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
