// POSIX implementation of core/file.h. pread/pwrite take 64-bit off_t because the build defines
// _FILE_OFFSET_BITS=64 where off_t could be 32 bits; the static_assert below makes sure.
#if !defined(_WIN32)
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/file.h"

static_assert(sizeof(off_t) == 8, "64-bit file offsets are required (models are larger than 4 GB)");

namespace strata {

namespace {
std::string errno_text(int err) { return std::strerror(err); }
}  // namespace

Result<File> File::open_reading(const std::string& path, bool unbuffered) {
    int flags = O_RDONLY | O_CLOEXEC;
    if (unbuffered) {
#if defined(O_DIRECT)
        flags |= O_DIRECT;
#else
        return Status::error("cannot open {} for unbuffered reads: this system has no O_DIRECT", path);
#endif
    }
    int fd = ::open(path.c_str(), flags);
    if (fd < 0) {
        int err = errno;
        return Status::error("cannot open {}{}: {} (check the path and that the file is readable)", path,
                             unbuffered ? " for unbuffered reads" : "", errno_text(err));
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        int err = errno;
        ::close(fd);
        return Status::error("cannot stat {}: {}", path, errno_text(err));
    }
    if (S_ISDIR(st.st_mode)) {
        ::close(fd);
        return Status::error("cannot open {}: expected a regular file, got a directory", path);
    }
    File f;
    f.handle_ = fd;
    f.size_ = static_cast<uint64_t>(st.st_size);
    f.path_ = path;
    return f;
}

Result<File> File::open_read(const std::string& path) { return open_reading(path, false); }

Result<File> File::open_read_unbuffered(const std::string& path) { return open_reading(path, true); }

Result<File> File::create(const std::string& path) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        int err = errno;
        return Status::error("cannot create {}: {} (check the folder exists and is writable)", path,
                             errno_text(err));
    }
    File f;
    f.handle_ = fd;
    f.path_ = path;
    return f;
}

File::File(File&& other) noexcept
    : handle_(other.handle_), size_(other.size_), path_(std::move(other.path_)) {
    other.handle_ = -1;
}

File& File::operator=(File&& other) noexcept {
    if (this != &other) {
        if (handle_ >= 0) ::close(static_cast<int>(handle_));
        handle_ = other.handle_;
        size_ = other.size_;
        path_ = std::move(other.path_);
        other.handle_ = -1;
    }
    return *this;
}

File::~File() {
    if (handle_ >= 0) ::close(static_cast<int>(handle_));
}

Status File::read_at(uint64_t offset, void* dst, uint64_t n) const {
    if (offset > size_ || n > size_ - offset) {
        return Status::error("reading {}: expected a range inside the file's {} bytes, got {} bytes at offset {}",
                             path_, size_, n, offset);
    }
    auto* out = static_cast<char*>(dst);
    while (n > 0) {
        // Linux caps one read near 2 GiB; ask for at most 1 GiB at a time.
        size_t chunk = static_cast<size_t>(n < (1ull << 30) ? n : (1ull << 30));
        ssize_t got = ::pread(static_cast<int>(handle_), out, chunk, static_cast<off_t>(offset));
        if (got < 0) {
            if (errno == EINTR) continue;
            return Status::error("reading {} at offset {}: {}", path_, offset, errno_text(errno));
        }
        if (got == 0) return Status::error("reading {}: unexpected end of file at offset {}", path_, offset);
        out += got;
        offset += static_cast<uint64_t>(got);
        n -= static_cast<uint64_t>(got);
    }
    return Status::ok();
}

Result<std::string> File::read_to_end() {
    // A regular file's size is a good first guess; a pipe reports 0 and grows the buffer as it goes.
    std::string data;
    data.resize(size_ > 0 ? static_cast<size_t>(size_) + 1 : 64 * 1024);
    size_t used = 0;
    for (;;) {
        if (used == data.size()) data.resize(data.size() * 2);
        ssize_t got = ::read(static_cast<int>(handle_), data.data() + used, data.size() - used);
        if (got < 0) {
            if (errno == EINTR) continue;
            return Status::error("reading {}: {}", path_, errno_text(errno));
        }
        if (got == 0) break;
        used += static_cast<size_t>(got);
    }
    data.resize(used);
    return data;
}

Status File::write(const void* src, uint64_t n) {
    const auto* in = static_cast<const char*>(src);
    while (n > 0) {
        size_t chunk = static_cast<size_t>(n < (1ull << 30) ? n : (1ull << 30));
        ssize_t put = ::write(static_cast<int>(handle_), in, chunk);
        if (put < 0) {
            if (errno == EINTR) continue;
            return Status::error("writing {}: {} (is the disk full?)", path_, errno_text(errno));
        }
        in += put;
        size_ += static_cast<uint64_t>(put);
        n -= static_cast<uint64_t>(put);
    }
    return Status::ok();
}

Status File::close() {
    if (handle_ < 0) return Status::ok();
    int rc = ::close(static_cast<int>(handle_));
    handle_ = -1;
    if (rc != 0) return Status::error("closing {}: {}", path_, errno_text(errno));
    return Status::ok();
}

bool file_exists(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace strata
#endif  // !_WIN32
