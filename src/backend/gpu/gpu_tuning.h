#pragma once
// The GPU kernels' switches between a measured path and its alternative, kept so that one binary
// can compare the two (A/B rounds on the device), and the timing studies' switches. Defaults are
// the paths the committed benchmarks chose. Carried by GpuContext (ctx.tuning()), so every op
// reads the settings of the context it is queued on; the command line fills them from the
// STRATA_GPU_* variables in one place (cli/environment.h). Plain data: the kernel files
// (nvcc, hipcc) include it.
//
//   ComputeOptions o;  o.gpu_tuning.mmq = false;   // prompt matmuls on f16 tensor cores instead

#include <algorithm>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace strata::gpu {

// A timing study: the forward queues no chained kernel for the named ops (names as --gpu-profile
// prints them; a trailing '*' matches a prefix), and `extra_launches` empty chained kernels after
// every op. Comparing decode speed with and without them gives what an op, or one launch, costs
// inside a replayed graph, where per-op events cannot time anything. Outputs are wrong while it is
// active (backend/gpu/op_profiler.cpp parses it; the command line says so on stderr).
struct OpAblation {
    std::vector<std::string> names = {};
    int extra_launches = 0;
    bool active() const { return !names.empty() || extra_launches > 0; }
    bool mutes(const char* op) const {
        const std::string_view name(op);
        for (const std::string& pattern : names) {
            if (!pattern.empty() && pattern.back() == '*') {
                if (name.starts_with(std::string_view(pattern).substr(0, pattern.size() - 1))) return true;
            } else if (name == pattern) {
                return true;
            }
        }
        return false;
    }
};

// The study that STRATA_GPU_ABLATE=NAME[,NAME...] and STRATA_GPU_EXTRA_LAUNCHES=N ask for (null:
// unset; a negative count: none).
inline OpAblation parse_op_ablation(const char* ablate, const char* extra_launches) {
    OpAblation a;
    if (ablate != nullptr) {
        std::string_view list(ablate);
        while (!list.empty()) {
            const size_t comma = list.find(',');
            const std::string_view item = list.substr(0, comma);
            if (!item.empty()) a.names.emplace_back(item);
            list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
        }
    }
    if (extra_launches != nullptr) a.extra_launches = std::max(0, std::atoi(extra_launches));
    return a;
}

struct GpuTuning {
    // Prompt matmuls of quantized weights on int8 tensor-core tiles (MMQ); off: f16 tensor cores
    // with float activations. STRATA_GPU_MMQ=0.
    bool mmq = true;
    // 64 or 128 forces the MMQ tiles' height; else chosen by shape. STRATA_GPU_MMQ_ROWS.
    int mmq_rows = 0;
    // Prompt matmuls on f16 tensor cores where MMQ does not take them; off: f32 tiles.
    // STRATA_GPU_TENSOR_CORES=0.
    bool tensor_cores = true;
    // 64 or 128 forces the f16 tiles' height (H200 pp512 3825 vs 3395 tok/s with tall ones);
    // else chosen by shape. STRATA_GPU_TC_ROWS.
    int tensor_core_rows = 0;
    // Decode products with int8 activations; off: f32. STRATA_GPU_MATVEC=f32.
    bool int8_matvec = true;
    // Decode mat-vecs compiled per weight format instead of one kernel switching on the format
    // (bench/results/2026-11-30-typed-matvec). STRATA_GPU_MATVEC_TYPED=0.
    bool typed_matvec = true;
    // A decode step captured once and replayed as a graph; off: launched op by op.
    // STRATA_GPU_GRAPHS=0.
    bool graphs = true;
    // On sm_90+, a kernel scheduled while the one before drains (programmatic dependent launch);
    // off: each starts after the previous one ended. STRATA_GPU_PDL=0.
    bool chained_launches = true;
    // Prompt attention over an f16 cache on tensor cores (sm_80+); off: f32 FMA tiles.
    // STRATA_GPU_FLASH_MMA=0.
    bool flash_mma = true;
    // Decode attention likewise. STRATA_GPU_DECODE_MMA=0.
    bool decode_mma = true;
    // 1..the kernel's limit: at most this many slices of a long decode attention (0: 32).
    // STRATA_GPU_ATTN_MAX_SPLITS.
    int attention_max_splits = 0;
    // Every row of logits copied to the host and sampled there, instead of reduced on the GPU.
    // STRATA_GPU_SAMPLING=0 turns device sampling off.
    bool device_sampling = true;
    // Peer access between two GPUs where the hardware has it; off: copies staged through host
    // memory, so a machine with peer access tests that path. STRATA_GPU_PEER=0.
    bool peer_access = true;
    // The tensor split's all-reduce: "auto" (NCCL where it loads, else copies between the GPUs),
    // "nccl" or "copies". STRATA_GPU_COLLECTIVE.
    std::string collective = "auto";
    // Where to load NCCL from ("": the usual names). STRATA_NCCL_LIBRARY.
    std::string nccl_library = {};
    // NCCL's all-reduces inside captured decode graphs; off: the step runs eagerly.
    // STRATA_NCCL_GRAPHS=0.
    bool nccl_graphs = true;
    // A timing study (above). STRATA_GPU_ABLATE, STRATA_GPU_EXTRA_LAUNCHES.
    OpAblation ablation = {};
};

}  // namespace strata::gpu
