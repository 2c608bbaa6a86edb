#pragma once
// The CPU kernels' switches between a measured path and its alternative, kept so that one binary
// can compare the two. Defaults are the paths the committed benchmarks chose (named beside each
// field). Carried by CpuContext, so every op reads the settings of the context it runs in; the
// command line fills them from the STRATA_CPU_* variables in one place (cli/environment.h).
//
//   CpuContext ctx(pool, CpuTuning{.tiles = CpuTiles::None});   // same bits, the slower path

#include <cstdint>
#include <optional>

namespace strata {

// Where a matmul's K-quant tile kernels (quant/cpu/dot_rows.h) take tokens four at a time.
enum class CpuTiles {
    None,    // nowhere: later tokens one at a time through the multi-row kernel
    Cached,  // for the tokens after a job's first (which streams through the single-row kernel)
    All,     // the first tokens stream through a tile too
};

struct CpuTuning {
    // The matmul's software prefetch window ahead of the streamed row, in bytes (0: none); unset,
    // 4096 for one-token products on 8 threads or more, else 2048 (backend/cpu/matmul.cpp;
    // bench/results/2026-11-30-cpu-prefetch, 2026-11-30-chain-events). STRATA_CPU_PREFETCH_BYTES.
    std::optional<uint64_t> prefetch_bytes = std::nullopt;
    // Same bits either way. STRATA_CPU_TILES=0 (None) or =cached (Cached).
    CpuTiles tiles = CpuTiles::All;
    // The attention computes exp() of every score, with std::exp one at a time, instead of taking
    // those more than 50 below the largest as zero (their subnormal products ran 5x slower on a
    // Xeon: bench/results/2026-11-30-tiers-split). STRATA_CPU_ATTN_ALL_EXP=1.
    bool attention_all_exp = false;
};

}  // namespace strata
