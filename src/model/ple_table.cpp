// The PLE table's tiers (ple_table.h).
#include "model/ple_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "backend/cpu/matmul.h"
#include "core/aligned_buffer.h"
#include "core/check.h"
#include "quant/traits.h"

namespace strata {

namespace {

constexpr uint64_t kAlign = File::kUnbufferedAlignment;

// A read that cannot complete leaves a step without its inputs, and a forward pass has no error
// path: say what failed and where, then stop (the file went away or the disk failed).
[[noreturn]] void fail_read(const std::string& path, const Status& status) {
    std::fprintf(stderr, "strata: reading the PLE table from %s failed: %s (was the file moved, or the disk removed?)\n",
                 path.c_str(), status.message().c_str());
    std::abort();
}

// Each thread's window for one row's aligned span: a row never spans more than two alignment
// units when it is smaller than one, and the table's rows are ~90 bytes.
struct RowWindow {
    AlignedBuffer bytes;
    uint8_t* reserve(uint64_t n) {
        if (n > bytes.size()) bytes = AlignedBuffer((n + kAlign - 1) / kAlign * kAlign, kAlign);
        return bytes.data();
    }
};

RowWindow& row_window() {
    thread_local RowWindow window;
    return window;
}

}  // namespace

std::optional<PleTableTier> parse_ple_table_tier(std::string_view name) {
    if (name == "auto") return PleTableTier::Auto;
    if (name == "map") return PleTableTier::Mapped;
    if (name == "ram") return PleTableTier::Ram;
    if (name == "ssd") return PleTableTier::Ssd;
    return std::nullopt;
}

const char* ple_table_tier_name(PleTableTier tier) {
    switch (tier) {
        case PleTableTier::Auto: return "auto";
        case PleTableTier::Mapped: return "map";
        case PleTableTier::Ram: return "ram";
        case PleTableTier::Ssd: return "ssd";
    }
    return "?";
}

Result<std::unique_ptr<PleTable>> PleTable::open(const GgufFile& file, const Weight& table, const PleTableOptions& options) {
    STRATA_CHECK(table.info != nullptr && table.data != nullptr, "PleTable::open without the table's tensor");
    std::unique_ptr<PleTable> t(new PleTable());
    t->tier_ = options.tier == PleTableTier::Auto ? PleTableTier::Mapped : options.tier;
    t->view_ = table;
    const GgufTensorInfo& info = *table.info;
    const uint64_t bytes = static_cast<uint64_t>(table.rows()) * table.row_bytes;
    switch (t->tier_) {
        case PleTableTier::Auto:
        case PleTableTier::Mapped: break;
        case PleTableTier::Ram: {
            // Read through the mapping once, in chunks that report progress (29 GB take a while);
            // afterwards the rows live in our own pages.
            t->ram_ = AlignedBuffer(static_cast<size_t>(bytes));
            constexpr uint64_t kChunk = uint64_t(256) << 20;
            for (uint64_t done = 0; done < bytes; done += kChunk) {
                const uint64_t n = std::min(kChunk, bytes - done);
                std::memcpy(t->ram_.data() + done, table.data + done, static_cast<size_t>(n));
                if (options.progress) options.progress(done + n, bytes);
            }
            t->view_.data = t->ram_.data();
            break;
        }
        case PleTableTier::Ssd: {
            const std::string& path = file.file_paths()[info.file_index];
            t->data_offset_ = info.offset;
            if (options.direct_io) {
                auto direct = File::open_read_unbuffered(path);
                if (direct) t->file_ = std::move(*direct), t->direct_ = true;
            }
            STRATA_ASSIGN_OR_RETURN(t->buffered_, File::open_read(path));
            if (!t->direct_) t->file_ = std::move(t->buffered_);
            if (t->data_offset_ + bytes > t->file_.size()) {
                return Status::error("{}: the PLE table's {} bytes at offset {} run past the file's end ({} bytes)", path,
                                     bytes, t->data_offset_, t->file_.size());
            }
            break;
        }
    }
    return t;
}

PleTable::Span PleTable::span_of(int32_t id) const {
    const uint64_t at = data_offset_ + static_cast<uint64_t>(id) * view_.row_bytes;
    if (!direct_) return {at, at + view_.row_bytes};
    // The file's last unit may be partial: the span ends where the file does.
    return {at / kAlign * kAlign, std::min((at + view_.row_bytes + kAlign - 1) / kAlign * kAlign, file_.size())};
}

void PleTable::read_group(const int32_t* ids, const int64_t* order, int64_t g0, int64_t g1, float* out) {
    const Span first = span_of(ids[order[g0]]), last = span_of(ids[order[g1 - 1]]);
    const uint64_t begin = first.begin, n = last.end - first.begin;
    // An unbuffered read must be whole units: a span cut short by the file's end goes through the
    // buffered handle.
    const bool whole_units = n % kAlign == 0;
    uint8_t* window = row_window().reserve((n + kAlign - 1) / kAlign * kAlign);
    const Status s = (direct_ && !whole_units ? buffered_ : file_).read_at(begin, window, n);
    if (!s) fail_read(file_.path(), s);
    disk_reads_.fetch_add(1, std::memory_order_relaxed);
    disk_bytes_.fetch_add(n, std::memory_order_relaxed);
    const int64_t width = view_.ne[0];
    const DequantizeRowFn dequantize = quant_traits(view_.type).dequantize_row;
    for (int64_t i = g0; i < g1; ++i) {
        const uint64_t at = data_offset_ + static_cast<uint64_t>(ids[order[i]]) * view_.row_bytes;
        dequantize(window + (at - begin), out + order[i] * width, width);
    }
}

void PleTable::get_rows(const int32_t* ids, int64_t n, float* out, ThreadPool* pool) {
    rows_.fetch_add(static_cast<uint64_t>(n), std::memory_order_relaxed);
    const int64_t width = view_.ne[0];
    const bool threads = pool != nullptr && pool->size() > 1;
    if (tier_ != PleTableTier::Ssd) {
        const auto run = [&](int64_t r0, int64_t r1, int) { cpu_get_rows(view_, ids + r0, r1 - r0, out + r0 * width); };
        if (threads && n >= 64) pool->parallel_for(n, run);  // from memory only batches are worth splitting
        else run(0, n, 0);
        return;
    }
    // From the disk: the rows in id order, and one read for each group of rows whose spans touch
    // (a repeated n-gram, or neighbours in one 4 KiB unit: a prompt's rows come in bulk), up to
    // kMaxGroupBytes. Every group waits on its own read, so even a decode step's 16 go out on all
    // threads (several reads in flight).
    constexpr uint64_t kMaxGroupBytes = uint64_t(256) << 10;
    order_.resize(static_cast<size_t>(n));
    std::iota(order_.begin(), order_.end(), int64_t{0});
    std::sort(order_.begin(), order_.end(), [&](int64_t a, int64_t b) { return ids[a] < ids[b]; });
    groups_.clear();
    uint64_t group_begin = 0, group_end = 0;
    for (int64_t i = 0; i < n; ++i) {
        const Span sp = span_of(ids[order_[static_cast<size_t>(i)]]);
        if (i == 0 || sp.begin > group_end || sp.end - group_begin > kMaxGroupBytes) {
            groups_.push_back(i);
            group_begin = sp.begin;
        }
        group_end = std::max(group_end, sp.end);
    }
    groups_.push_back(n);
    const int64_t n_groups = static_cast<int64_t>(groups_.size()) - 1;
    const auto run = [&](int64_t k0, int64_t k1, int) {
        for (int64_t k = k0; k < k1; ++k) {
            read_group(ids, order_.data(), groups_[static_cast<size_t>(k)], groups_[static_cast<size_t>(k + 1)], out);
        }
    };
    if (threads && n_groups >= 2) pool->parallel_for(n_groups, run);
    else run(0, n_groups, 0);
}

PleTableStats PleTable::stats() const {
    return {rows_.load(std::memory_order_relaxed), disk_reads_.load(std::memory_order_relaxed),
            disk_bytes_.load(std::memory_order_relaxed)};
}

}  // namespace strata
