#pragma once
// A read-only memory mapping of a whole file. The OS pages it in on demand, so mapping a 200 GB
// model costs nothing until bytes are touched; the expert tiers use this as their slowest tier.
//
//   STRATA_ASSIGN_OR_RETURN(MappedFile m, MappedFile::map("model.gguf"));
//   const uint8_t* p = m.data();   // m.size() bytes, valid while m lives

#include <cstdint>
#include <string>

#include "core/status.h"

namespace strata {

class MappedFile {
public:
    static Result<MappedFile> map(const std::string& path);

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
    std::string path_;
};

}  // namespace strata
