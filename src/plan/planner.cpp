#include "plan/planner.h"

#include <algorithm>

#include "plan/layer_split.h"
#include "plan/tensor_split.h"
#include "plan/units.h"

namespace strata {

namespace {

// The one GPU of a request without a split (a "split" over one GPU is that GPU).
const DeviceMemory* single_gpu(const PlanRequest& req) {
    const DeviceMemory* gpu = req.split_gpus.size() == 1 ? &req.split_gpus[0]
                              : req.split_gpus.empty() && req.gpu ? &*req.gpu
                                                                  : nullptr;
    return gpu && gpu->total_bytes > 0 ? gpu : nullptr;
}

bool is_split(const PlanRequest& req) { return req.split_gpus.size() >= 2; }

// The vram_* fields of a plan: one GPU's share, or (added up) every share of a split.
void add_vram(Plan& p, const GpuShare& s) {
    p.vram_capacity += s.capacity;
    p.vram_dense += s.dense;
    p.vram_context += s.context;
    Workspace& ws = p.vram_workspace;
    ws.activations += s.workspace.activations;
    ws.attention += s.workspace.attention;
    ws.ffn += s.workspace.ffn;
    ws.logits += s.workspace.logits;
    ws.expert_staging += s.workspace.expert_staging;
    p.vram_reserve += s.reserve;
    p.vram_expert_slots += s.expert_slots;
    p.vram_unused += s.unused;
    p.vram_shortfall += s.shortfall;
}

// The placement alone (no suggestions, no words): what make_plan re-runs to check a suggestion.
// Problems of a split itself (plan/layer_split.h) are already in p.problems.
Plan place(const ModelInventory& inv, const ModelWeights& w, const PlanRequest& req) {
    const ModelConfig& cfg = inv.config;
    Plan p;
    p.request = req;
    p.model_name = inv.name;
    p.arch = std::string(cfg.arch_name());
    p.weights = w;
    p.context = context_memory(cfg, req.n_ctx, req.kv_type);
    p.expert_slot_bytes = w.expert_slot_bytes;
    const DeviceMemory* gpu = single_gpu(req);
    p.has_gpu = gpu || is_split(req);
    if (!p.has_gpu) p.context.kv_staging_bytes = 0;  // the CPU reads q8_0 blocks directly

    if (is_split(req)) {
        LayerSplit split = req.split_tensor ? split_by_tensors(inv, w, req) : split_by_layers(inv, w, req);
        p.gpu_shares = std::move(split.shares);
        p.problems = std::move(split.problems);
        for (const GpuShare& s : p.gpu_shares) add_vram(p, s);
    } else if (gpu) {
        add_vram(p, plan_gpu_share(cfg, w, p.context.total(), gpu_capacity(*gpu, req.vram_budget), req.vram_reserve,
                                   req.n_batch, true));
    }

    p.ram_capacity = req.ram_bytes;
    p.ram_reserve = req.ram_reserve;
    p.ram_dense = p.has_gpu ? w.dense_host_bytes() : w.dense_bytes;
    p.ram_context = p.has_gpu ? 0 : p.context.total();
    p.ram_workspace = host_workspace(cfg, w, req.n_batch, p.has_gpu);
    const uint64_t homeless = w.expert_count - p.vram_expert_slots;
    const uint64_t ram_need = p.ram_fixed() + p.ram_reserve;
    if (ram_need > p.ram_capacity) {
        p.ram_shortfall = ram_need - p.ram_capacity;
    } else {
        const uint64_t room = p.ram_capacity - ram_need;
        if (w.expert_slot_bytes > 0) p.ram_arena_experts = std::min<uint64_t>(homeless, room / w.expert_slot_bytes);
        p.ram_unused = room - p.ram_arena_bytes();
        if (p.ram_arena_experts == homeless && w.ngram_table_bytes <= p.ram_unused) {
            p.ram_ngram_table = w.ngram_table_bytes;
            p.ram_unused -= w.ngram_table_bytes;
        }
    }
    p.disk_ngram_table = w.ngram_table_bytes - p.ram_ngram_table;
    p.disk_experts = homeless - p.ram_arena_experts;
    // By the average expert: exact when all layers' experts have one size.
    p.disk_expert_bytes = w.expert_count ? static_cast<uint64_t>(static_cast<double>(w.expert_bytes) *
                                                                 static_cast<double>(p.disk_experts) /
                                                                 static_cast<double>(w.expert_count))
                                         : 0;
    p.fits = p.vram_shortfall == 0 && p.ram_shortfall == 0 && p.problems.empty();
    return p;
}

std::string b(uint64_t bytes) { return format_bytes(bytes); }

std::string percent(double share) { return fmt::format("{:.1f}%", share * 100.0); }

// Each suggestion is a changed request that was planned again and fits.
std::vector<std::string> suggest(const ModelInventory& inv, const ModelWeights& w, const Plan& p) {
    std::vector<std::string> out;
    const PlanRequest& req = p.request;
    auto fits = [&](const PlanRequest& r) { return place(inv, w, r).fits; };

    // Shorter context: the longest multiple of 256 tokens (below the asked one) that fits.
    if (p.context.kv_bytes_per_token > 0 && req.n_ctx > 256) {
        int64_t lo = 0, hi = (req.n_ctx - 1) / 256;  // in units of 256 tokens
        while (lo < hi) {
            int64_t mid = (lo + hi + 1) / 2;
            PlanRequest r = req;
            r.n_ctx = mid * 256;
            if (fits(r)) lo = mid;
            else hi = mid - 1;
        }
        if (lo > 0) {
            const int64_t ctx = lo * 256;
            out.push_back(fmt::format("--ctx {}: a shorter context (the KV cache takes {} instead of {})", ctx,
                                      b(context_memory(inv.config, ctx, req.kv_type).kv_bytes), b(p.context.kv_bytes)));
        }
    }
    // A narrower KV type: one whose cache (with the staging rows of q8_0) takes less, and that the
    // plan's device runs.
    for (KvCacheType t : {KvCacheType::F16, KvCacheType::Q8_0}) {
        ContextMemory alt = context_memory(inv.config, req.n_ctx, t);
        if (!p.has_gpu) alt.kv_staging_bytes = 0;
        if (p.context.kv_bytes == 0 || alt.total() >= p.context.total()) continue;
        PlanRequest r = req;
        r.kv_type = t;
        if (fits(r)) {
            out.push_back(fmt::format("--kv-type {}: the KV cache takes {} instead of {}", kv_type_name(t),
                                      b(context_memory(inv.config, req.n_ctx, t).kv_bytes), b(p.context.kv_bytes)));
            break;
        }
    }
    // Smaller batches shrink the workspaces (prompts then take more passes).
    for (int64_t batch : {256, 128, 64, 32}) {
        if (batch >= req.n_batch) continue;
        PlanRequest r = req;
        r.n_batch = batch;
        if (fits(r)) {
            out.push_back(fmt::format("--batch {}: smaller workspaces (prompts are processed in more passes)", batch));
            break;
        }
    }
    // Smaller reserves, when the shortfall is within them (the reserve is kept on each GPU of a
    // split, so the largest shortfall counts).
    uint64_t worst_shortfall = p.gpu_shares.empty() ? p.vram_shortfall : 0;
    for (const GpuShare& s : p.gpu_shares) worst_shortfall = std::max(worst_shortfall, s.shortfall);
    if (worst_shortfall > 0 && worst_shortfall <= req.vram_reserve) {
        PlanRequest r = req;
        r.vram_reserve = (req.vram_reserve - worst_shortfall) / kMiB * kMiB;
        if (fits(r)) {
            out.push_back(fmt::format("--vram-reserve {}MiB: a smaller reserve (less headroom for the driver, "
                                      "fragmentation and other programs)",
                                      r.vram_reserve / kMiB));
        }
    }
    if (p.ram_shortfall > 0) {
        if (p.ram_shortfall <= req.ram_reserve) {
            PlanRequest r = req;
            r.ram_reserve = (req.ram_reserve - p.ram_shortfall) / kMiB * kMiB;
            if (fits(r)) {
                out.push_back(fmt::format("--ram-reserve {}MiB: leave less RAM to the OS and other programs",
                                          r.ram_reserve / kMiB));
            }
        }
        out.push_back(fmt::format("more RAM: {} more (close other programs, or a machine with more memory)",
                                  b(p.ram_shortfall)));
    }
    // An explicit split that the split by capacity would fix.
    if (!req.split_at.empty() && is_split(req)) {
        PlanRequest r = req;
        r.split_at.clear();
        const Plan by_capacity = place(inv, w, r);
        if (by_capacity.fits) {
            std::string at;
            for (size_t i = 1; i < by_capacity.gpu_shares.size(); ++i) {
                at += (i > 1 ? "," : "") + std::to_string(by_capacity.gpu_shares[i].layer_begin);
            }
            out.push_back(fmt::format("--split-at {}: split where each GPU has room (what omitting --split-at does)", at));
        }
    }
    // Without the GPU(s), if the host can carry everything.
    if (p.vram_shortfall > 0 || is_split(req)) {
        PlanRequest r = req;
        r.gpu.reset();
        r.split_gpus.clear();
        r.split_at.clear();
        if (fits(r)) out.push_back("--vram 0: run everything on the CPU (slower, but it fits in RAM)");
    }
    if (p.vram_shortfall > 0 && p.gpu_shares.empty()) {
        out.push_back(fmt::format("a larger GPU or budget: this plan needs {} of VRAM", b(p.vram_capacity + p.vram_shortfall)));
    }
    for (size_t i = 0; i < p.gpu_shares.size(); ++i) {
        const GpuShare& s = p.gpu_shares[i];
        if (s.shortfall == 0) continue;
        out.push_back(fmt::format("a larger GPU or budget for {}: its layers need {} of VRAM", share_label(s, i),
                                  b(s.capacity + s.shortfall)));
    }
    out.push_back(fmt::format("a smaller quant of the model: dense weights take {}{}", b(w.dense_bytes),
                              w.expert_bytes ? fmt::format(", experts {}", b(w.expert_bytes)) : std::string()));
    return out;
}

std::string embedding_in_ram(const ModelWeights& w) {
    return w.embedding_is_output ? std::string()
                                 : fmt::format(" (the {} embedding table stays in RAM: a token reads one row)",
                                               b(w.embedding_bytes));
}

void explain_one_gpu(Plan& p) {
    const ModelWeights& w = p.weights;
    const PlanRequest& req = p.request;
    auto& e = p.explanation;
    const Workspace& ws = p.vram_workspace;
    const DeviceMemory* gpu = single_gpu(req);
    std::string name = gpu->name.empty() ? std::string("GPU") : gpu->name;
    e.push_back(fmt::format("{}: the plan may use {}{}.", name, b(p.vram_capacity),
                            req.vram_budget > 0 ? fmt::format(" (--vram-budget {})", b(req.vram_budget)) : std::string()));
    e.push_back(fmt::format("Reserved first in VRAM: dense weights {}{}, KV cache and state {}, workspaces {} for "
                            "batches of {} (activations {}, attention {}, FFN {}, logits {}{}).",
                            b(p.vram_dense), embedding_in_ram(w), b(p.vram_context), b(ws.total()), req.n_batch,
                            b(ws.activations), b(ws.attention), b(ws.ffn), b(ws.logits),
                            ws.expert_staging ? fmt::format(", expert copy buffers {}", b(ws.expert_staging))
                                              : std::string()));
    e.push_back(fmt::format("Then the reserve: {} kept free for the driver, fragmentation and other programs.",
                            b(p.vram_reserve)));
    if (w.expert_count > 0 && p.vram_shortfall == 0) {
        e.push_back(fmt::format("The expert cache takes the rest: {} slots of {} (one expert of one layer: gate, up "
                                "and down) = {}, holding {} of {} experts ({}).",
                                p.vram_expert_slots, b(p.expert_slot_bytes), b(p.vram_experts()), p.vram_expert_slots,
                                w.expert_count, percent(p.vram_expert_share())));
    }
}

// One line per GPU of a layer split, each planned like a single GPU for its layers.
void explain_split(const ModelConfig& cfg, Plan& p) {
    const ModelWeights& w = p.weights;
    const PlanRequest& req = p.request;
    auto& e = p.explanation;
    const std::string budget =
        req.vram_budget > 0 ? fmt::format("; --vram-budget {} on each", b(req.vram_budget)) : std::string();
    if (req.split_tensor) {
        const bool mla = !tensor_split_shards_attention(cfg);
        std::string whole;  // what this architecture keeps whole on the first GPU
        if (mla) whole = " The first also holds the latent attention with its KV cache, the leading dense FFNs and the shared experts whole.";
        else if (cfg.full_attention_interval > 0) whole = " The first also holds the DeltaNet layers with every recurrent state and the shared experts whole.";
        e.push_back(fmt::format("Split by tensor over {} GPUs: each holds a part of every layer ({}of each layer's "
                                "experts) with the norms and routers, the parts of each sum are all-reduced, and the "
                                "output head and logits are on the first{}{}.{} No expert cache: every expert stays in "
                                "VRAM.",
                                p.gpu_shares.size(),
                                mla ? "its share " : "its attention heads and their KV cache, its share of each dense FFN and ",
                                embedding_in_ram(w), budget, whole));
    } else {
        e.push_back(fmt::format("Split by layers over {} GPUs ({}): each holds its layers' dense weights, KV cache and "
                                "expert cache, a batch's activations pass from one to the next, the output head is on the "
                                "last and the logits on the last and the first, where they are read{}{}.",
                                p.gpu_shares.size(), req.split_at.empty() ? "by capacity" : "at --split-at",
                                embedding_in_ram(w), budget));
    }
    for (size_t i = 0; i < p.gpu_shares.size(); ++i) {
        const GpuShare& s = p.gpu_shares[i];
        std::string experts;
        if (s.shortfall > 0) {
            experts = fmt::format("{} short", b(s.shortfall));
        } else if (s.expert_count > 0) {
            experts = fmt::format("expert cache {} slots ({}) for its {} experts ({})", s.expert_slots,
                                  b(s.expert_slots * p.expert_slot_bytes), s.expert_count,
                                  percent(static_cast<double>(s.expert_slots) / static_cast<double>(s.expert_count)));
        } else {
            experts = "no routed experts";
        }
        e.push_back(fmt::format("{}: may use {}; dense weights {}, KV cache and state {}, workspaces {}{}, reserve {}; "
                                "{}.",
                                share_label(s, i), b(s.capacity), b(s.dense), b(s.context), b(s.workspace.total()),
                                s.workspace.expert_staging
                                    ? fmt::format(" (expert copy buffers {})", b(s.workspace.expert_staging))
                                    : std::string(),
                                b(s.reserve), experts));
    }
    if (w.expert_count > 0 && p.vram_shortfall == 0) {
        e.push_back(fmt::format("The expert caches together: {} slots of {} = {}, holding {} of {} experts ({}).",
                                p.vram_expert_slots, b(p.expert_slot_bytes), b(p.vram_experts()), p.vram_expert_slots,
                                w.expert_count, percent(p.vram_expert_share())));
    }
}

void explain(const ModelConfig& cfg, Plan& p) {
    const ModelWeights& w = p.weights;
    const PlanRequest& req = p.request;
    auto& e = p.explanation;
    if (w.expert_count > 0) {
        e.push_back(fmt::format("{} ({}): {} of weights, {} dense and {} in {} routed experts ({} layers × {}).",
                                p.model_name, p.arch, b(w.total_bytes), b(w.dense_bytes), b(w.expert_bytes),
                                w.expert_count, w.moe_layers, w.experts_per_layer));
        e.push_back(fmt::format("A decoded token reads about {} ({:.2f} GB) of weights, {} ({:.2f} GB) of them experts: "
                                "{} used of {} per layer.",
                                b(w.bytes_per_token), static_cast<double>(w.bytes_per_token) / 1e9,
                                b(w.expert_bytes_per_token), static_cast<double>(w.expert_bytes_per_token) / 1e9,
                                cfg.n_expert_used, w.experts_per_layer));
    } else {
        e.push_back(fmt::format("{} ({}): a dense model, {} of weights, all of them read for every token.",
                                p.model_name, p.arch, b(w.total_bytes)));
    }
    const std::string where = p.has_gpu ? "VRAM" : "RAM";
    e.push_back(fmt::format("KV cache in {}: {} attention layer(s) × {} positions × {} bytes ({}) = {}{}{}.", where,
                            p.context.attention_layers, req.n_ctx,
                            p.context.attention_layers ? p.context.kv_bytes_per_token / p.context.attention_layers : 0,
                            kv_type_name(req.kv_type), b(p.context.kv_bytes),
                            p.context.kv_staging_bytes
                                ? fmt::format(", and one layer's rows in f16 ({}) through which the GPU's attention "
                                              "reads it",
                                              b(p.context.kv_staging_bytes))
                                : std::string(),
                            p.context.recurrent_layers
                                ? fmt::format("; recurrent state of {} linear-attention layer(s) {}", p.context.recurrent_layers,
                                              b(p.context.recurrent_bytes))
                                : std::string()));
    if (!p.has_gpu) {
        e.push_back(fmt::format("No GPU: dense weights ({}), KV cache and workspaces ({}) stay in RAM.", b(w.dense_bytes),
                                b(p.ram_workspace)));
    } else if (p.gpu_shares.empty()) {
        explain_one_gpu(p);
    } else {
        explain_split(cfg, p);
    }
    if (w.expert_count > 0 && p.fits) {
        if (p.vram_expert_slots == w.expert_count) {
            e.push_back("Every expert is resident in VRAM: no copies, no CPU expert work.");
        } else {
            e.push_back(fmt::format("Pinned RAM arena: {} experts ({}, {}){}.", p.ram_arena_experts,
                                    b(p.ram_arena_bytes()), percent(p.ram_expert_share()),
                                    p.disk_experts == 0
                                        ? std::string("; none left on disk")
                                        : fmt::format("; read from disk through the mapped file: {} experts ({}, {})",
                                                      p.disk_experts, b(p.disk_expert_bytes),
                                                      percent(p.disk_expert_share()))));
            const uint64_t expert_tensors = w.expert_bytes;
            if (expert_tensors > req.page_lock_limit) {
                e.push_back(fmt::format("The OS page-locks at most {} for the GPU (Windows' display driver: about half of "
                                        "RAM): of the {} of expert tensors, the layers within it are locked and copies of "
                                        "the rest are staged by the driver (slower).",
                                        b(req.page_lock_limit), b(expert_tensors)));
            }
            e.push_back(fmt::format("With uniform routing about {} of a token's {} of expert reads miss VRAM; skewed "
                                    "routing and the cache policy do better.",
                                    b(static_cast<uint64_t>((1.0 - p.vram_expert_share()) *
                                                            static_cast<double>(w.expert_bytes_per_token))),
                                    b(w.expert_bytes_per_token)));
        }
    }
    if (w.ngram_table_bytes > 0 && p.fits) {
        e.push_back(p.ram_ngram_table > 0
                        ? fmt::format("The n-gram (PLE) table ({}) is read into RAM: a token's {} rows never touch the disk.",
                                      b(w.ngram_table_bytes), w.ngram_rows_per_token)
                        : fmt::format("The n-gram (PLE) table ({}) stays on the SSD: a token reads its {} rows ({} each) "
                                      "there{}.",
                                      b(w.ngram_table_bytes), w.ngram_rows_per_token, b(w.ngram_row_bytes),
                                      p.disk_experts > 0 ? " (RAM goes to experts first)" : " (it does not fit the RAM left)"));
    }
    if (p.fits) {
        e.push_back(fmt::format("RAM: {} of {} for {}workspaces, {} reserve, {} arena{}; {} unused.", b(p.ram_fixed()),
                                b(p.ram_capacity), p.has_gpu ? "the embedding table and " : "weights, KV cache and ",
                                b(p.ram_reserve), b(p.ram_arena_bytes()),
                                p.ram_ngram_table > 0 ? fmt::format(", {} n-gram table", b(p.ram_ngram_table)) : "",
                                b(p.ram_unused)));
    }
}

}  // namespace

namespace {
double share(uint64_t part, uint64_t whole) {
    return whole ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}
}  // namespace

double Plan::vram_expert_share() const { return share(vram_expert_slots, weights.expert_count); }
double Plan::ram_expert_share() const { return share(ram_arena_experts, weights.expert_count); }
double Plan::disk_expert_share() const { return share(disk_experts, weights.expert_count); }

std::vector<MemorySegment> Plan::vram_segments() const {
    if (!has_gpu) return {};
    return {{"dense", "dense weights", vram_dense},
            {"kv", "KV cache", vram_context},
            {"workspace", "workspaces", vram_workspace.total()},
            {"experts", "expert slots", vram_experts()},
            {"reserve", "reserve", vram_reserve},
            {"free", "unused", vram_unused}};
}

std::vector<MemorySegment> Plan::ram_segments() const {
    return {{"dense", has_gpu ? "embedding table" : "dense weights", ram_dense},
            {"kv", "KV cache", ram_context},
            {"workspace", "workspaces", ram_workspace},
            {"experts", "expert arena", ram_arena_bytes()},
            {"ngram", "n-gram table", ram_ngram_table},
            {"reserve", "reserve", ram_reserve},
            {"free", "unused", ram_unused}};
}

Plan make_plan(const ModelInventory& inv, const ModelWeights& w, const PlanRequest& req) {
    Plan p = place(inv, w, req);
    // One GPU's shortfall: "VRAM: ..." alone, "GPU 1 (name, layers 24–47): ..." in a split.
    auto vram_problem = [&](const std::string& who, uint64_t dense, uint64_t context, uint64_t workspace,
                            uint64_t reserve, uint64_t capacity, uint64_t shortfall) {
        const uint64_t fixed = dense + context + workspace;
        p.problems.push_back(fmt::format(
            "{}: what is allocated before the expert cache needs {} (dense weights {} + KV cache {} + workspaces {}) "
            "plus the {} reserve = {}, but the plan may use {}: {} short",
            who, b(fixed), b(dense), b(context), b(workspace), b(reserve), b(fixed + reserve), b(capacity), b(shortfall)));
    };
    if (p.gpu_shares.empty() && p.vram_shortfall > 0) {
        vram_problem("VRAM", p.vram_dense, p.vram_context, p.vram_workspace.total(), p.vram_reserve, p.vram_capacity,
                     p.vram_shortfall);
    }
    for (size_t i = 0; i < p.gpu_shares.size(); ++i) {
        const GpuShare& s = p.gpu_shares[i];
        if (s.shortfall > 0) {
            vram_problem(share_label(s, i), s.dense, s.context, s.workspace.total(), s.reserve, s.capacity, s.shortfall);
        }
    }
    if (p.ram_shortfall > 0) {
        p.problems.push_back(fmt::format("RAM: {} ({}workspaces {}) plus the {} reserve = {}, but {} is available: {} short",
                                         b(p.ram_fixed()),
                                         p.has_gpu ? fmt::format("embedding table {}, ", b(p.ram_dense))
                                                   : fmt::format("dense weights {}, KV cache {}, ", b(p.ram_dense),
                                                                 b(p.ram_context)),
                                         b(p.ram_workspace), b(p.ram_reserve), b(p.ram_fixed() + p.ram_reserve),
                                         b(p.ram_capacity), b(p.ram_shortfall)));
    }
    if (!p.fits) {
        p.suggestions = suggest(inv, w, p);
    }
    if (p.fits && p.disk_experts > 0) {
        p.notes.push_back(fmt::format("{} experts ({}) do not fit in RAM and are read from disk when used: decode speed "
                                      "then follows the SSD; {} more RAM keeps them all in memory",
                                      p.disk_experts, b(p.disk_expert_bytes),
                                      b(p.disk_experts * p.expert_slot_bytes)));
    }
    if (req.n_ctx > 0 && inv.config.n_ctx_train > 0 && static_cast<uint64_t>(req.n_ctx) > inv.config.n_ctx_train) {
        p.notes.push_back(fmt::format("--ctx {} is longer than the {} tokens the model was trained on", req.n_ctx,
                                      inv.config.n_ctx_train));
    }
    if (p.has_gpu && p.fits && req.vram_reserve < 256 * kMiB) {
        p.notes.push_back(fmt::format("a VRAM reserve of {} leaves little room for the driver's own allocations",
                                      b(req.vram_reserve)));
    }
    explain(inv.config, p);
    return p;
}

}  // namespace strata
