#pragma once
// A read-only memory mapping of a whole file. The OS pages it in on demand, so mapping a 200 GB
// model costs nothing until bytes are touched; the expert tiers use this as their slowest tier.
//
//   STRATA_ASSIGN_OR_RETURN(MappedFile m, MappedFile::map("model.gguf"));
//   const uint8_t* p = m.data();   // m.size() bytes, valid while m lives

#include <cstdint>
#include <functional>
#include <string>

#include "core/status.h"

namespace strata {

class MappedFile {
public:
    static Result<MappedFile> map(const std::string& path);
    // The whole file read into anonymous memory asking for 2 MiB pages (MADV_HUGEPAGE) instead
    // of mapped: the CPU kernels stream weights from 4 KiB file pages slower than from huge pages
    // (bench/results/2026-11-29-cpu-q4k). Costs the read and RAM the page cache cannot reclaim;
    // the read drops the file's cached pages behind it. `progress(done, total)` after each chunk.
    // Where transparent huge pages are off the copy still works, on small pages; on Windows the
    // file is mapped instead.
    static Result<MappedFile> read_into_memory(const std::string& path,
                                               const std::function<void(uint64_t, uint64_t)>& progress = nullptr);

    MappedFile() = default;
    MappedFile(MappedFile&& other) noexcept;
    MappedFile& operator=(MappedFile&& other) noexcept;
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;
    ~MappedFile();

    const uint8_t* data() const { return data_; }
    uint64_t size() const { return size_; }
    const std::string& path() const { return path_; }

    // Hints that [offset, offset+n) will be read soon (readahead); harmless if unsupported.
    void will_need(uint64_t offset, uint64_t n) const;

private:
    void release();
    const uint8_t* data_ = nullptr;
    uint64_t size_ = 0;
    uint64_t reserved_ = 0;  // read_into_memory: the anonymous region's length (0: a file mapping)
    std::string path_;
};

}  // namespace strata
