#pragma once
// Files with 64-bit sizes and offsets, and positional reads that many threads may issue at once
// on the same File (no shared file position). Models are 10-400 GB: every size here is uint64_t.
// The platform part lives in file_posix.cpp (and file_windows.cpp on Windows); this header names
// no platform type.
//
//   STRATA_ASSIGN_OR_RETURN(File f, File::open_read("model.gguf"));
//   std::vector<uint8_t> header(64);
//   STRATA_TRY(f.read_at(0, header.data(), header.size()));

#include <cstdint>
#include <string>

#include "core/status.h"

namespace strata {

class File {
public:
    static Result<File> open_read(const std::string& path);
    // Opens `path` for reads that bypass the page cache (O_DIRECT; FILE_FLAG_NO_BUFFERING on
    // Windows): read_at's offset, length and destination must then be multiples of
    // kUnbufferedAlignment. Fails where the file system refuses it (tmpfs, some network file
    // systems): open_read is the fallback.
    static Result<File> open_read_unbuffered(const std::string& path);
    static constexpr uint64_t kUnbufferedAlignment = 4096;
    // Creates or truncates `path` for writing.
    static Result<File> create(const std::string& path);

    File() = default;
    File(File&& other) noexcept;
    File& operator=(File&& other) noexcept;
    File(const File&) = delete;
    File& operator=(const File&) = delete;
    ~File();

    const std::string& path() const { return path_; }
    uint64_t size() const { return size_; }

    // Reads exactly `n` bytes at `offset`; fails (does not return short) at end of file.
    Status read_at(uint64_t offset, void* dst, uint64_t n) const;
    // Reads from the current position until end of file. For pipes, FIFOs and terminals
    // (/dev/stdin), whose size() is 0 whatever they will deliver, this is the only way to read them.
    Result<std::string> read_to_end();
    // Appends `n` bytes at the end of a file opened with create().
    Status write(const void* src, uint64_t n);
    Status close();

private:
    // open_read and open_read_unbuffered: one way to open, stat and check the path.
    static Result<File> open_reading(const std::string& path, bool unbuffered);

    std::intptr_t handle_ = -1;  // a file descriptor on POSIX, a HANDLE on Windows
    uint64_t size_ = 0;
    std::string path_;
};

// Whole-file helpers for small files (test vectors, templates, JSON). read_file_to_string reads to
// end of file, so a pipe or FIFO given as a path (`--file /dev/stdin`) is read whole; "-" is
// standard input.
Result<std::string> read_file_to_string(const std::string& path);
Status write_string_to_file(const std::string& path, std::string_view data);
bool file_exists(const std::string& path);

}  // namespace strata
