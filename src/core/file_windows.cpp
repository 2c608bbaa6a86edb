// Windows implementation of core/file.h. ReadFile with an OVERLAPPED offset is the positional read
// (no shared file pointer), so concurrent reads of one handle are safe as on POSIX.
#if defined(_WIN32)
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>

#include <string>

#include "core/file.h"

namespace strata {

namespace {
std::wstring widen(const std::string& utf8) {
    int n = MultiByteToWideChar(CP_UTF8, 0, utf8.c_str(), -1, nullptr, 0);
    std::wstring w(static_cast<size_t>(n > 0 ? n - 1 : 0), L'\0');
    if (n > 1) MultiByteToWideChar(CP_UTF8, 0, utf8.c_str(), -1, w.data(), n);
    return w;
}
std::string last_error_text() {
    DWORD code = GetLastError();
    char buf[256] = {0};
    FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, nullptr, code, 0, buf, sizeof(buf), nullptr);
    std::string s(buf);
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
    return s + " (error " + std::to_string(code) + ")";
}
HANDLE as_handle(std::intptr_t h) { return reinterpret_cast<HANDLE>(h); }
bool is_directory(const std::string& path) {
    const DWORD attributes = GetFileAttributesW(widen(path).c_str());
    return attributes != INVALID_FILE_ATTRIBUTES && (attributes & FILE_ATTRIBUTE_DIRECTORY) != 0;
}
}  // namespace

Result<File> File::open_reading(const std::string& path, bool unbuffered) {
    const DWORD flags = FILE_ATTRIBUTE_NORMAL | FILE_FLAG_RANDOM_ACCESS | (unbuffered ? FILE_FLAG_NO_BUFFERING : 0);
    HANDLE h = CreateFileW(widen(path).c_str(), GENERIC_READ, FILE_SHARE_READ, nullptr, OPEN_EXISTING, flags, nullptr);
    if (h == INVALID_HANDLE_VALUE) {
        // A directory opens only with FILE_FLAG_BACKUP_SEMANTICS: without it, "access denied".
        if (is_directory(path)) return Status::error("cannot open {}: expected a regular file, got a directory", path);
        return Status::error("cannot open {}{}: {} (check the path and that the file is readable)", path,
                             unbuffered ? " for unbuffered reads" : "", last_error_text());
    }
    LARGE_INTEGER size;
    if (!GetFileSizeEx(h, &size)) {
        std::string err = last_error_text();
        CloseHandle(h);
        return Status::error("cannot stat {}: {}", path, err);
    }
    File f;
    f.handle_ = reinterpret_cast<std::intptr_t>(h);
    f.size_ = static_cast<uint64_t>(size.QuadPart);
    f.path_ = path;
    return f;
}

Result<File> File::open_read(const std::string& path) { return open_reading(path, false); }

Result<File> File::open_read_unbuffered(const std::string& path) { return open_reading(path, true); }

Result<File> File::create(const std::string& path) {
    HANDLE h = CreateFileW(widen(path).c_str(), GENERIC_WRITE, 0, nullptr, CREATE_ALWAYS, FILE_ATTRIBUTE_NORMAL, nullptr);
    if (h == INVALID_HANDLE_VALUE) {
        return Status::error("cannot create {}: {} (check the folder exists and is writable)", path, last_error_text());
    }
    File f;
    f.handle_ = reinterpret_cast<std::intptr_t>(h);
    f.path_ = path;
    return f;
}

File::File(File&& other) noexcept : handle_(other.handle_), size_(other.size_), path_(std::move(other.path_)) {
    other.handle_ = -1;
}

File& File::operator=(File&& other) noexcept {
    if (this != &other) {
        if (handle_ != -1) CloseHandle(as_handle(handle_));
        handle_ = other.handle_;
        size_ = other.size_;
        path_ = std::move(other.path_);
        other.handle_ = -1;
    }
    return *this;
}

File::~File() {
    if (handle_ != -1) CloseHandle(as_handle(handle_));
}

Status File::read_at(uint64_t offset, void* dst, uint64_t n) const {
    if (offset > size_ || n > size_ - offset) {
        return Status::error("reading {}: expected a range inside the file's {} bytes, got {} bytes at offset {}",
                             path_, size_, n, offset);
    }
    auto* out = static_cast<char*>(dst);
    while (n > 0) {
        DWORD chunk = static_cast<DWORD>(n < (1ull << 30) ? n : (1ull << 30));
        OVERLAPPED ov{};
        ov.Offset = static_cast<DWORD>(offset & 0xffffffffu);
        ov.OffsetHigh = static_cast<DWORD>(offset >> 32);
        DWORD got = 0;
        if (!ReadFile(as_handle(handle_), out, chunk, &got, &ov)) {
            return Status::error("reading {} at offset {}: {}", path_, offset, last_error_text());
        }
        if (got == 0) return Status::error("reading {}: unexpected end of file at offset {}", path_, offset);
        out += got;
        offset += got;
        n -= got;
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
        const size_t room = data.size() - used;
        DWORD got = 0;
        if (!ReadFile(as_handle(handle_), data.data() + used, static_cast<DWORD>(room < (1ull << 30) ? room : (1ull << 30)),
                      &got, nullptr)) {
            if (GetLastError() == ERROR_BROKEN_PIPE) break;  // the writer closed its end: end of file
            return Status::error("reading {}: {}", path_, last_error_text());
        }
        if (got == 0) break;
        used += got;
    }
    data.resize(used);
    return data;
}

Status File::write(const void* src, uint64_t n) {
    const auto* in = static_cast<const char*>(src);
    while (n > 0) {
        DWORD chunk = static_cast<DWORD>(n < (1ull << 30) ? n : (1ull << 30));
        DWORD put = 0;
        if (!WriteFile(as_handle(handle_), in, chunk, &put, nullptr)) {
            return Status::error("writing {}: {} (is the disk full?)", path_, last_error_text());
        }
        in += put;
        size_ += put;
        n -= put;
    }
    return Status::ok();
}

Status File::close() {
    if (handle_ == -1) return Status::ok();
    BOOL ok = CloseHandle(as_handle(handle_));
    handle_ = -1;
    if (!ok) return Status::error("closing {}: {}", path_, last_error_text());
    return Status::ok();
}

bool file_exists(const std::string& path) {
    DWORD attrs = GetFileAttributesW(widen(path).c_str());
    return attrs != INVALID_FILE_ATTRIBUTES && !(attrs & FILE_ATTRIBUTE_DIRECTORY);
}

}  // namespace strata
#endif  // _WIN32
