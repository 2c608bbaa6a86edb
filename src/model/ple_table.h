#pragma once
// Where qwen4exp's n-gram table (per_layer_token_embd: 320M rows of 160 values, ~29 GB as IQ4_NL
// in the published files, which put it in a shard of its own) is read from. Each token needs 16
// of its rows (NEW_ARCHS.md A1.7), a few KB out of 29 GB, so the table is a tier of its own:
//   Auto    the memory plan's choice (Ram when it has room after the experts, else Ssd); a
//           model loaded without a plan takes the mapping;
//   Mapped  the file's mapping, as every other weight (the page cache decides what stays);
//   Ram     read whole into memory at load (the plan had room): lookups never touch the disk;
//   Ssd     positional reads of just the rows a step needs, O_DIRECT where the file system
//           allows it, so the lookups neither wait for nor evict the page cache's pages (the
//           expert tiers' RAM), several rows in flight at once on the pool's threads.
// All three give the same floats (the rows' bytes dequantized by the type's reference).
//
//   STRATA_ASSIGN_OR_RETURN(auto table, PleTable::open(file, weights.table, {PleTableTier::Ssd}));
//   table->get_rows(ids, n, out, &pool);   // n rows of row_width floats
//   table->stats().disk_bytes;             // what the disk delivered so far

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "backend/weight.h"
#include "core/aligned_buffer.h"
#include "core/file.h"
#include "core/status.h"
#include "core/thread_pool.h"
#include "gguf/reader.h"

namespace strata {

enum class PleTableTier { Auto, Mapped, Ram, Ssd };
std::optional<PleTableTier> parse_ple_table_tier(std::string_view name);  // "auto" | "map" | "ram" | "ssd"
const char* ple_table_tier_name(PleTableTier tier);

struct PleTableOptions {
    PleTableTier tier = PleTableTier::Auto;
    bool direct_io = true;  // Ssd: bypass the page cache where the file system allows it
    // Ram: called as the table is read in (done, total bytes), for a progress bar.
    std::function<void(uint64_t, uint64_t)> progress = nullptr;
};

struct PleTableStats {
    uint64_t rows = 0;        // rows looked up
    uint64_t disk_reads = 0;  // positional reads issued (Ssd)
    uint64_t disk_bytes = 0;  // bytes those reads delivered, alignment included (Ssd)
};

class PleTable {
public:
    // `table`: the weight view of per_layer_token_embd in `file` (its rows' bytes).
    static Result<std::unique_ptr<PleTable>> open(const GgufFile& file, const Weight& table, const PleTableOptions& options);

    // out = the rows ids[0..n) of the table, dequantized: n rows of row_width() floats. Rows are
    // spread over `pool` (may be null) when there are several. One caller at a time (the
    // forward pass that owns the table).
    void get_rows(const int32_t* ids, int64_t n, float* out, ThreadPool* pool);

    PleTableTier tier() const { return tier_; }
    bool direct_io() const { return direct_; }
    int64_t row_width() const { return view_.ne[0]; }
    // Bytes this tier holds in RAM (Ram: the whole table; otherwise none of its own).
    uint64_t resident_bytes() const { return ram_.size(); }
    PleTableStats stats() const;

private:
    PleTable() = default;
    // The bytes a row's read covers in the file: the row, or with O_DIRECT its whole units.
    struct Span {
        uint64_t begin = 0, end = 0;
    };
    Span span_of(int32_t id) const;
    // One read for rows order[g0..g1) (ids sorted, spans touching), each dequantized into its
    // place in `out` (Ssd).
    void read_group(const int32_t* ids, const int64_t* order, int64_t g0, int64_t g1, float* out);

    PleTableTier tier_ = PleTableTier::Mapped;
    Weight view_;  // the rows where they are read from (the mapping, or ram_)
    AlignedBuffer ram_;
    File file_;      // the table's shard (unbuffered when direct_)
    File buffered_;  // direct_: the same file buffered, for a span the file's end cuts short
    bool direct_ = false;
    uint64_t data_offset_ = 0;  // the table's first byte in file_
    std::atomic<uint64_t> rows_{0}, disk_reads_{0}, disk_bytes_{0};
    std::vector<int64_t> order_, groups_;  // get_rows' working lists (Ssd), kept between calls
};

}  // namespace strata
