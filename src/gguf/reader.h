#pragma once
// GGUF reader: maps a model file (v2 or v3, or a set of split files) read-only, validates every
// count, length, size and offset before trusting it, and exposes metadata and tensors.
//
//   STRATA_ASSIGN_OR_RETURN(GgufFile gguf, GgufFile::open("model-00001-of-00003.gguf"));
//   std::string arch = gguf.get_string("general.architecture", "");
//   uint32_t n_layers = gguf.get_uint(arch + ".block_count", 0);
//   const GgufTensorInfo* t = gguf.tensor("blk.0.attn_q.weight");
//   const uint8_t* bytes = gguf.tensor_data(*t);   // t->n_bytes bytes, in the mapped file

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/mapped_file.h"
#include "core/status.h"
#include "gguf/tensor_type.h"
#include "gguf/value.h"

namespace strata {

constexpr int kGgufMaxDims = 4;

struct GgufTensorInfo {
    std::string name;
    TensorType type = TensorType::F32;
    uint32_t n_dims = 0;
    uint64_t ne[kGgufMaxDims] = {1, 1, 1, 1};  // ne[0] is the row length (contiguous)
    uint64_t n_elements = 0;
    uint64_t n_bytes = 0;
    uint32_t file_index = 0;   // which split file holds the data
    uint64_t offset = 0;       // absolute byte offset of the data in that file

    uint64_t rows() const { return n_elements / ne[0]; }
    std::string shape_string() const;  // "[4096, 32000]"
};

struct GgufMetadataEntry {
    std::string key;
    GgufValue value;
};

// Limits that keep a malformed or hostile file from making the reader allocate without bound.
struct GgufLimits {
    uint64_t max_string_bytes = uint64_t(1) << 30;   // a string value or key
    uint64_t max_array_items = uint64_t(1) << 28;    // one array (vocabularies are ~250k)
    uint32_t max_array_depth = 8;                    // nested arrays
    uint64_t max_tensors = uint64_t(1) << 20;
    uint64_t max_metadata_entries = uint64_t(1) << 20;
};

// How GgufFile::open brings in a file's bytes (--load): mapped (nothing read until used, the page
// cache shared with other processes), or read into memory on huge pages
// (MappedFile::read_into_memory), which CPU decode streams weights from faster.
enum class GgufLoad { Map, Memory };
// Called as a file is read into memory (GgufLoad::Memory): a progress bar for tens of GB.
void set_gguf_load_progress(std::function<void(const std::string& path, uint64_t done, uint64_t total)> progress);

class GgufFile {
public:
    // Opens `path`. When the file carries `split.count` > 1 (or its name has the
    // `-0000N-of-0000M.gguf` form), the other parts are found beside it and their tensors joined
    // into one index; metadata comes from the first part.
    static Result<GgufFile> open(const std::string& path, const GgufLimits& limits = {}, GgufLoad load = GgufLoad::Map);
    // Parses a file already in memory (used by the fuzz target and tests). `data` must outlive the
    // returned object; no split handling.
    static Result<GgufFile> parse_memory(const uint8_t* data, uint64_t size, const std::string& name,
                                         const GgufLimits& limits = {});

    GgufFile();
    GgufFile(GgufFile&&) noexcept;
    GgufFile& operator=(GgufFile&&) noexcept;
    ~GgufFile();

    uint32_t version() const { return version_; }
    uint64_t alignment() const { return alignment_; }
    const std::string& path() const { return path_; }
    size_t file_count() const { return file_paths_.size(); }
    const std::vector<std::string>& file_paths() const { return file_paths_; }
    uint64_t total_file_bytes() const;

    // Metadata in file order.
    const std::vector<GgufMetadataEntry>& metadata() const { return metadata_; }
    const GgufValue* find(const std::string& key) const;

    // Typed getters: the default is returned when the key is absent; a key of the wrong type is
    // also answered with the default (use find() and the typed accessors to tell them apart).
    int64_t get_int(const std::string& key, int64_t fallback) const;
    uint64_t get_uint(const std::string& key, uint64_t fallback) const;
    double get_float(const std::string& key, double fallback) const;
    bool get_bool(const std::string& key, bool fallback) const;
    std::string get_string(const std::string& key, const std::string& fallback) const;
    // Strict getters for keys a model cannot work without: the error names the key and type.
    Result<uint64_t> require_uint(const std::string& key) const;
    Result<double> require_float(const std::string& key) const;
    Result<std::string> require_string(const std::string& key) const;

    const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }
    const GgufTensorInfo* tensor(const std::string& name) const;
    // Pointer to the tensor's bytes inside the mapping of its file (valid while this object lives).
    const uint8_t* tensor_data(const GgufTensorInfo& info) const;

private:
    struct Part;
    Status parse_part(size_t part_index, const GgufLimits& limits, bool is_first);

    uint32_t version_ = 0;
    uint64_t alignment_ = 32;
    std::string path_;
    std::vector<std::string> file_paths_;
    std::vector<std::unique_ptr<Part>> parts_;
    std::vector<GgufMetadataEntry> metadata_;
    std::unordered_map<std::string, size_t> metadata_index_;
    std::vector<GgufTensorInfo> tensors_;
    std::unordered_map<std::string, size_t> tensor_index_;
};

// For `name-00002-of-00005.gguf` returns the five paths; for any other name, just `path`.
std::vector<std::string> gguf_split_paths(const std::string& path, uint32_t count_hint);

}  // namespace strata
