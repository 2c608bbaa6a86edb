#include "backend/cpu/matmul.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "backend/cpu/cpu_op_profile.h"
#include "quant/cpu/dot_kernels.h"
#include "quant/cpu/dot_rows.h"
#include "quant/cpu/quantize_activation.h"
#include "quant/traits.h"

namespace strata {

namespace {

// Rows are handed out in blocks so a block of weight rows stays in cache while it meets every
// token of the job. A thread claims up to kMaxClaimBlocks blocks at once (at most kClaimBytes of
// weights, so that they stay in L2 for the later tokens): the first token streams a claim from
// DRAM, and a longer run of contiguous rows keeps the prefetchers going where a 16-row block
// would end every few KiB. Claims shrink as the work runs out (guided scheduling): a claim
// takes at most 1/(2·threads) of the blocks left, so the last ones are single blocks and the
// threads finish together.
constexpr int64_t kRowBlock = 16;
constexpr int64_t kMaxClaimBlocks = 4;
constexpr uint64_t kClaimBytes = 256 * 1024;
// While the first token streams a claim, each row's dot is preceded by a software prefetch of
// the row a window ahead (and a claim's first window is requested at once). The L2 streamer on
// Intel cores stops at every 4 KiB page and must see misses to restart, so one core's stream
// alone keeps too few lines in flight. With the window and the longer claims, 16 Xeon threads
// decoded 1.3-1.4x faster (bench/results/2026-11-30-cpu-prefetch/).
// A one-token job (decode) is a pure stream, and its window grows with the threads streaming at
// once, as the memory's latency under load does: 16 Xeon threads decoded 1.04-1.09x faster with
// 4 KiB than with 2 KiB (every round), while two Zen cores decoded 1.04x slower (4 of 6 rounds).
// A job of several tokens reads its claim again from cache after the first; there the expert
// tiers' prompt lane (15 threads) measured 1.01x faster with 2 KiB (3 of 3 rounds, within the
// noise), so it keeps 2 KiB (bench/results/2026-11-30-chain-events/).
// CpuTuning::prefetch_bytes sets another window (0: none), to compare.
constexpr uint64_t kPrefetchBytes = 2048;
constexpr uint64_t kPrefetchBytesStreaming = 4096;
constexpr int kManyThreads = 8;
uint64_t prefetch_window(const CpuTuning& tuning, int threads, int64_t n_tokens) {
    if (tuning.prefetch_bytes) return *tuning.prefetch_bytes;
    return threads >= kManyThreads && n_tokens == 1 ? kPrefetchBytesStreaming : kPrefetchBytes;
}
constexpr int64_t kQuantizeInlineValues = 16384;

struct PreparedJob {
    const uint8_t* weights;     // first row of the matrix
    uint64_t weight_row_bytes;
    const uint8_t* act;         // activations in the dot type, input_rows(job) rows
    uint64_t act_row_bytes;
    DotFn dot;
    DotRowsFn dot_rows;         // null: no multi-row kernel for the type
    DotTileFn dot_tile;         // null: no tile kernel for the type
    bool stream_tiles;          // the first tokens stream through a tile too (tile_use)
    int64_t n_in, n_out, n_tokens;
    const int32_t* x_rows;      // null: token t is activation row t
    QuantizeRowFn quantize;     // x's rows to the dot type (unset for F32 dots)
    float* y;
    int64_t first_block;        // index of this job's first row block in the shared range
    uint64_t prefetch_bytes;    // the window ahead of the streamed row (0: none)
};

// The bookkeeping of one grouped call, kept per thread from call to call: once a decode step has
// sized it, later steps allocate nothing.
struct GroupedScratch {
    std::vector<PreparedJob> prepared;
    std::vector<size_t> act_owner;
    std::vector<uint64_t> act_offset;
    std::vector<std::pair<size_t, int64_t>> rows_to_quantize;
};

// Rows of x a job reads from: all of them are quantized, once for every job naming the same x.
int64_t input_rows(const MatmulJob& job) { return job.x_rows ? job.x_count : job.n_tokens; }

GroupedScratch& grouped_scratch() {
    thread_local GroupedScratch scratch;
    return scratch;
}

// Always inlined, as is StreamRuns::prefetch below: GCC 12 finds that a function whose only effect
// is __builtin_prefetch has no side effects and deletes its calls (-O1 and up), which removed
// every software prefetch of the matmul while the window was requested through StreamRuns.
[[gnu::always_inline]] inline void prefetch_lines(const uint8_t* begin, const uint8_t* end) {
    for (const uint8_t* line = begin; line < end; line += 64) __builtin_prefetch(line, 0, 3);
}

// Tokens a tile kernel takes at once (quant/cpu/dot_rows.h): its registers hold four tokens' sums.
constexpr int64_t kTileTokens = 4;

// The weight bytes a thread streams for a first token: its current run of rows, then the run
// after it in the same claim (the next job's rows), so that the software prefetch runs on across
// a job boundary instead of the next job starting cold. A decode step's expert pass is 16 or 24
// small matrices (1.2-1.3 MiB each), and a cold start costs a full memory latency per matrix.
struct StreamRuns {
    const uint8_t* begin;      // the current run
    const uint8_t* end;
    const uint8_t* next;       // the next run (null: none)
    const uint8_t* next_end;
    // Prefetches the bytes [from, from + bytes) of the current run followed by the next.
    [[gnu::always_inline]] void prefetch(uint64_t from, uint64_t bytes) const {
        const auto size = static_cast<uint64_t>(end - begin);
        if (from < size) prefetch_lines(begin + from, begin + std::min(size, from + bytes));
        if (next == nullptr || from + bytes <= size) return;
        const uint64_t skip = from > size ? from - size : 0;
        const auto next_size = static_cast<uint64_t>(next_end - next);
        if (skip < next_size) prefetch_lines(next + skip, next + std::min(next_size, from + bytes - size));
    }
};

// Rows [o0, o1) of job p for every token. The first token (or the first group of up to four)
// streams them from memory one row after another, with the prefetch window ahead (into `next`'s
// rows past the end; `warm`: an earlier run of the claim has already requested this run's first
// window); later tokens find them in cache.
void compute_rows(const PreparedJob& p, int64_t o0, int64_t o1, const uint8_t* next, const uint8_t* next_end, bool warm) {
    const uint8_t* rows = p.weights + static_cast<uint64_t>(o0) * p.weight_row_bytes;
    const uint8_t* rows_end = p.weights + static_cast<uint64_t>(o1) * p.weight_row_bytes;
    const auto act_row = [&](int64_t t) { return p.act + static_cast<uint64_t>(p.x_rows ? p.x_rows[t] : t) * p.act_row_bytes; };
    const uint64_t window = p.prefetch_bytes;
    const StreamRuns stream{rows, rows_end, next, next_end};
    // Before each row the first token (group) streams: the window's lines ahead of it.
    const auto prefetch_ahead = [&](const uint8_t* row) {
        stream.prefetch(static_cast<uint64_t>(row - rows) + window, p.weight_row_bytes);
    };
    const auto prefetch_first_window = [&] {
        if (!warm) stream.prefetch(0, window);
    };
    for (int64_t t = 0; t < p.n_tokens;) {
        float* yt = p.y + t * p.n_out;
        // Same bits as the single-row kernel (quant/cpu/dot_rows.h). A tile shares a row's
        // unpacked quants among up to four tokens: 1.2-1.9x the multi-row kernel a token at a
        // time on rows in cache (bench/results/2026-11-30-tiers-split). The first group streams
        // the rows through the tile a row at a time, with the window ahead, as the single-row
        // kernel does for one token.
        const int64_t group = p.dot_tile && (t > 0 || p.stream_tiles) ? std::min(kTileTokens, p.n_tokens - t) : 1;
        if (group >= 2) {
            const void* acts[kTileTokens];
            for (int64_t g = 0; g < group; ++g) acts[g] = act_row(t + g);
            if (t > 0) {
                p.dot_tile(rows, p.weight_row_bytes, acts, group, p.n_in, o1 - o0, yt + o0, p.n_out);
            } else {
                if (window) prefetch_first_window();
                const uint8_t* row = rows;
                for (int64_t o = o0; o < o1; ++o, row += p.weight_row_bytes) {
                    if (window) prefetch_ahead(row);
                    p.dot_tile(row, p.weight_row_bytes, acts, group, p.n_in, 1, yt + o, p.n_out);
                }
            }
            t += group;
            continue;
        }
        const uint8_t* a = act_row(t);
        // In cache, four rows per pass over one token's activation beat the single-row kernel
        // (streamed from DRAM they would run slower: four row streams interleaved in each page
        // defeat the hardware prefetchers, and a software prefetch of the next four rows measured
        // 2x slower still on a Zen core).
        if (t > 0 && p.dot_rows) {
            p.dot_rows(rows, p.weight_row_bytes, a, p.n_in, o1 - o0, yt + o0);
            ++t;
            continue;
        }
        if (t == 0 && window) prefetch_first_window();
        const uint8_t* row = rows;
        for (int64_t o = o0; o < o1; ++o, row += p.weight_row_bytes) {
            if (t == 0 && window) prefetch_ahead(row);
            yt[o] = p.dot(row, a, p.n_in);
        }
        ++t;
    }
}

}  // namespace

void cpu_matmul_grouped(std::span<const MatmulJob> jobs, CpuContext& ctx) {
    CpuOpScope profile_scope("matmul");
    GroupedScratch& scratch = grouped_scratch();
    std::vector<PreparedJob>& prepared = scratch.prepared;
    prepared.assign(jobs.size(), PreparedJob{});
    // Which job first quantized each distinct (input, dot type, rows); later ones reuse it.
    std::vector<size_t>& act_owner = scratch.act_owner;
    act_owner.assign(jobs.size(), 0);
    uint64_t act_bytes_total = 0;
    std::vector<uint64_t>& act_offset = scratch.act_offset;
    act_offset.assign(jobs.size(), 0);
    int64_t blocks = 0;
    for (size_t j = 0; j < jobs.size(); ++j) {
        const MatmulJob& job = jobs[j];
        const Weight& w = *job.w;
        STRATA_CHECK(w.data != nullptr, "matmul with an absent weight");
        STRATA_CHECK(job.matrix_index >= 0 && job.matrix_index < w.ne[2] * w.ne[3], "matmul matrix index out of range");
        const QuantTraits& q = quant_traits(w.type);
        PreparedJob& p = prepared[j];
        p.weights = w.matrix(job.matrix_index);
        p.weight_row_bytes = w.row_bytes;
        p.dot = cpu_dot_kernel(w.type);
        p.dot_rows = cpu_dot_rows_kernel(w.type);
        // Where tiles run: CpuTuning::tiles (all of a job's tokens by default).
        p.dot_tile = ctx.tuning().tiles != CpuTiles::None ? cpu_dot_tile_kernel(w.type) : nullptr;
        p.stream_tiles = ctx.tuning().tiles == CpuTiles::All;
        STRATA_CHECK(p.dot != nullptr, "matmul on a type without a dot product");
        p.n_in = w.ne[0];
        p.n_out = w.ne[1];
        p.n_tokens = job.n_tokens;
        p.y = job.y;
        p.x_rows = job.x_rows;
        p.first_block = blocks;
        p.prefetch_bytes = prefetch_window(ctx.tuning(), ctx.pool().size(), job.n_tokens);
        blocks += job.n_tokens > 0 ? (p.n_out + kRowBlock - 1) / kRowBlock : 0;
        if (job.x_rows) {
            for (int64_t t = 0; t < job.n_tokens; ++t)
                STRATA_CHECK(job.x_rows[t] >= 0 && job.x_rows[t] < job.x_count, "matmul input row outside its input");
        }
        if (q.dot_type == TensorType::F32) {
            p.act = reinterpret_cast<const uint8_t*>(job.x);
            p.act_row_bytes = static_cast<uint64_t>(p.n_in) * sizeof(float);
            act_owner[j] = SIZE_MAX;
            continue;
        }
        p.act_row_bytes = tensor_type_info(q.dot_type)->row_bytes(static_cast<uint64_t>(p.n_in));
        p.quantize = cpu_quantize_activation(q.dot_type);
        act_owner[j] = j;
        for (size_t k = 0; k < j; ++k) {
            if (act_owner[k] == k && jobs[k].x == job.x && input_rows(jobs[k]) == input_rows(job) &&
                quant_traits(jobs[k].w->type).dot_type == q.dot_type && prepared[k].n_in == p.n_in) {
                act_owner[j] = k;
                break;
            }
        }
        if (act_owner[j] == j) {
            act_offset[j] = act_bytes_total;
            act_bytes_total += p.act_row_bytes * static_cast<uint64_t>(input_rows(job));
        }
    }

    // Quantize each distinct input once, all of them in one parallel pass over (job, token).
    uint8_t* act_buf = act_bytes_total ? ctx.scratch(CpuContext::kMatmulActivationSlot, act_bytes_total) : nullptr;
    std::vector<std::pair<size_t, int64_t>>& rows_to_quantize = scratch.rows_to_quantize;
    rows_to_quantize.clear();
    for (size_t j = 0; j < jobs.size(); ++j) {
        if (act_owner[j] != j) continue;
        for (int64_t t = 0; t < input_rows(jobs[j]); ++t) rows_to_quantize.emplace_back(j, t);
    }
    const auto quantize_rows = [&](int64_t r0, int64_t r1, int) {
        for (int64_t r = r0; r < r1; ++r) {
            auto [j, t] = rows_to_quantize[static_cast<size_t>(r)];
            const PreparedJob& p = prepared[j];
            p.quantize(jobs[j].x + t * p.n_in, act_buf + act_offset[j] + static_cast<uint64_t>(t) * p.act_row_bytes, p.n_in);
        }
    };
    // A few rows (a decode step's expert inputs: k rows of a few thousand values, a microsecond
    // each) are quantized here: waking the pool and waiting for it would cost more.
    const auto n_quantize = static_cast<int64_t>(rows_to_quantize.size());
    int64_t values_to_quantize = 0;
    for (const auto& [j, t] : rows_to_quantize) values_to_quantize += prepared[j].n_in;
    {
        CpuOpScope quantize_scope("quantize activations");
        if (values_to_quantize <= kQuantizeInlineValues) quantize_rows(0, n_quantize, 0);
        else ctx.pool().parallel_for(n_quantize, quantize_rows);
    }
    for (size_t j = 0; j < jobs.size(); ++j) {
        if (act_owner[j] == SIZE_MAX) continue;
        prepared[j].act = act_buf + act_offset[act_owner[j]];
    }

    // Blocks are claimed from a shared counter rather than split evenly up front: blocks of
    // different jobs cost different time (a Q6_K row reads 1.5x a Q4_K row), and on a busy machine
    // a preempted thread would otherwise leave its whole share for the rest to wait on. A claim
    // takes at most 1/(2·threads) of the blocks left (guided scheduling), so the last claims are
    // single blocks and the threads finish together. With several tokens a claim is also capped
    // at kClaimBytes, so that its rows stay in L2 for the later tokens. A one-token call reuses
    // nothing, so its claims are not capped: each claim restarts a thread's stream cold. With the
    // prefetch running on into a claim's next run, decode measured 1.03x on two Zen 3 cores (4 of
    // 4 rounds), 1.04x on 16 Xeon threads and 1.05x in the expert tiers' CPU lane
    // (bench/results/2026-12-01-cpu-decode-stream).
    bool one_token = true;
    for (const MatmulJob& job : jobs) one_token = one_token && job.n_tokens <= 1;
    uint64_t widest_row = 1;
    for (const PreparedJob& p : prepared) widest_row = std::max(widest_row, p.weight_row_bytes);
    const int64_t max_claim =
        one_token ? blocks
                  : std::clamp<int64_t>(static_cast<int64_t>(kClaimBytes / (kRowBlock * widest_row)), 1, kMaxClaimBlocks);
    // The run of contiguous rows of one job that starts at block b of a claim ending at b1 (j: a
    // job at or before b's; claimed blocks only increase, so b's job is found by a forward scan).
    struct Run {
        size_t job;
        int64_t o0, o1;      // rows of the job
        int64_t end_block;   // the block after the run
    };
    const auto run_at = [&](size_t j, int64_t b, int64_t b1) {
        while (j + 1 < prepared.size() && prepared[j + 1].first_block <= b) ++j;
        const PreparedJob& p = prepared[j];
        const int64_t job_end = j + 1 < prepared.size() ? prepared[j + 1].first_block : blocks;
        const int64_t end_block = std::min(b1, job_end);
        return Run{j, (b - p.first_block) * kRowBlock, std::min(p.n_out, (end_block - p.first_block) * kRowBlock), end_block};
    };
    const auto run_rows = [&](const Run& r, int64_t o) { return prepared[r.job].weights + static_cast<uint64_t>(o) * prepared[r.job].weight_row_bytes; };
    std::atomic<int64_t> next_block{0};
    const int threads = static_cast<int>(std::min<int64_t>(ctx.pool().size(), blocks));
    ctx.pool().parallel_for(threads, [&](int64_t, int64_t, int) {
        size_t j = 0;
        for (;;) {
            const int64_t left = blocks - next_block.load(std::memory_order_relaxed);
            if (left <= 0) break;
            const int64_t want = std::clamp<int64_t>(left / (2 * threads), 1, max_claim);
            const int64_t b0 = next_block.fetch_add(want, std::memory_order_relaxed);
            if (b0 >= blocks) break;
            const int64_t b1 = std::min(blocks, b0 + want);
            // The claim as runs of contiguous rows, one per job it touches; each run's stream
            // prefetches on into the next.
            for (int64_t b = b0; b < b1;) {
                const Run run = run_at(j, b, b1);
                j = run.job;
                const uint8_t* next = nullptr;
                const uint8_t* next_end = nullptr;
                if (run.end_block < b1) {
                    const Run after = run_at(j, run.end_block, b1);
                    next = run_rows(after, after.o0);
                    next_end = run_rows(after, after.o1);
                }
                compute_rows(prepared[j], run.o0, run.o1, next, next_end, b != b0);
                b = run.end_block;
            }
        }
    });
}

void cpu_matmul(const Weight& w, int64_t matrix_index, const float* x, int64_t n_tokens, float* y, CpuContext& ctx) {
    const MatmulJob job{&w, matrix_index, x, n_tokens, y};
    cpu_matmul_grouped(std::span<const MatmulJob>(&job, 1), ctx);
}

void cpu_get_rows(const Weight& w, const int32_t* ids, int64_t n, float* out) {
    const DequantizeRowFn dequantize = quant_traits(w.type).dequantize_row;
    for (int64_t t = 0; t < n; ++t) {
        STRATA_CHECK(ids[t] >= 0 && ids[t] < w.ne[1], "token id outside the embedding table");
        dequantize(w.row(ids[t]), out + t * w.ne[0], w.ne[0]);
    }
}

}  // namespace strata
