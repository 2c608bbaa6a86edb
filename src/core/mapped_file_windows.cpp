// Windows implementation of core/mapped_file.h: a read-only file mapping of the whole file, or the
// file read into committed memory (read_into_memory).
#if defined(_WIN32)
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>

#include <algorithm>
#include <string>

#include "core/file.h"
#include "core/mapped_file.h"

namespace strata {

Result<MappedFile> MappedFile::map(const std::string& path) {
    int wn = MultiByteToWideChar(CP_UTF8, 0, path.c_str(), -1, nullptr, 0);
    std::wstring wide(static_cast<size_t>(wn > 0 ? wn - 1 : 0), L'\0');
    if (wn > 1) MultiByteToWideChar(CP_UTF8, 0, path.c_str(), -1, wide.data(), wn);
    HANDLE file = CreateFileW(wide.c_str(), GENERIC_READ, FILE_SHARE_READ, nullptr, OPEN_EXISTING,
                              FILE_ATTRIBUTE_NORMAL, nullptr);
    if (file == INVALID_HANDLE_VALUE) {
        const DWORD err = GetLastError();
        const DWORD attributes = GetFileAttributesW(wide.c_str());
        if (attributes != INVALID_FILE_ATTRIBUTES && (attributes & FILE_ATTRIBUTE_DIRECTORY) != 0) {
            return Status::error("cannot map {}: expected a regular file", path);
        }
        return Status::error("cannot open {}: error {} (check the path and that the file is readable)", path, err);
    }
    LARGE_INTEGER size;
    if (!GetFileSizeEx(file, &size)) {
        CloseHandle(file);
        return Status::error("cannot stat {}: error {}", path, GetLastError());
    }
    MappedFile m;
    m.path_ = path;
    m.size_ = static_cast<uint64_t>(size.QuadPart);
    if (m.size_ > 0) {
        HANDLE mapping = CreateFileMappingW(file, nullptr, PAGE_READONLY, 0, 0, nullptr);
        if (!mapping) {
            DWORD err = GetLastError();
            CloseHandle(file);
            return Status::error("cannot map {} ({} bytes): error {}", path, m.size_, err);
        }
        void* p = MapViewOfFile(mapping, FILE_MAP_READ, 0, 0, 0);
        DWORD err = GetLastError();
        CloseHandle(mapping);  // the view keeps the mapping alive
        if (!p) {
            CloseHandle(file);
            return Status::error("cannot map {} ({} bytes): error {}", path, m.size_, err);
        }
        m.data_ = static_cast<const uint8_t*>(p);
    }
    CloseHandle(file);
    return m;
}

// Committed private memory, read in chunks through core/file.h (positional reads). Large pages
// would need a privilege most accounts lack (SeLockMemoryPrivilege): normal pages here.
Result<MappedFile> MappedFile::read_into_memory(const std::string& path,
                                                const std::function<void(uint64_t, uint64_t)>& progress) {
    STRATA_ASSIGN_OR_RETURN(File file, File::open_read(path));
    MappedFile m;
    m.path_ = path;
    m.size_ = file.size();
    m.reserved_ = std::max<uint64_t>(1, m.size_);
    void* p = VirtualAlloc(nullptr, static_cast<SIZE_T>(m.reserved_), MEM_RESERVE | MEM_COMMIT, PAGE_READWRITE);
    if (!p) {
        return Status::error("cannot reserve {} bytes of RAM to load {} into: error {} (use --load mmap)", m.reserved_, path,
                             GetLastError());
    }
    auto* bytes = static_cast<uint8_t*>(p);
    m.data_ = bytes;  // from here on the region is released with m
    constexpr uint64_t kChunk = uint64_t(64) << 20;
    for (uint64_t done = 0; done < m.size_;) {
        const uint64_t want = std::min(kChunk, m.size_ - done);
        STRATA_TRY(file.read_at(done, bytes + done, want));
        done += want;
        if (progress) progress(done, m.size_);
    }
    DWORD previous = 0;
    VirtualProtect(p, static_cast<SIZE_T>(m.reserved_), PAGE_READONLY, &previous);
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
    if (data_ && reserved_ > 0) VirtualFree(const_cast<uint8_t*>(data_), 0, MEM_RELEASE);
    else if (data_) UnmapViewOfFile(data_);
    data_ = nullptr;
    size_ = 0;
    reserved_ = 0;
}

void MappedFile::will_need(uint64_t offset, uint64_t n) const {
    if (!data_ || offset >= size_) return;
    if (n > size_ - offset) n = size_ - offset;
    WIN32_MEMORY_RANGE_ENTRY range{const_cast<uint8_t*>(data_) + offset, static_cast<SIZE_T>(n)};
    PrefetchVirtualMemory(GetCurrentProcess(), 1, &range, 0);  // a hint; failure is harmless
}

}  // namespace strata
#endif  // _WIN32
