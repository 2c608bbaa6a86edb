#include "plan/layer_split.h"

#include <algorithm>

#include "model/tensor_roles.h"
#include "plan/units.h"

namespace strata {

uint64_t gpu_capacity(const DeviceMemory& gpu, uint64_t vram_budget) {
    const uint64_t cap = std::min(gpu.free_bytes, gpu.total_bytes);
    return vram_budget > 0 ? std::min(cap, vram_budget) : cap;
}

GpuShare plan_gpu_share(const ModelConfig& cfg, const ModelWeights& w, uint64_t context_bytes, uint64_t capacity,
                        uint64_t reserve, int64_t n_batch, bool holds_logits) {
    GpuShare s;
    s.capacity = capacity;
    s.reserve = reserve;
    s.dense = w.dense_vram_bytes();
    s.context = context_bytes;
    s.expert_count = w.expert_count;
    auto workspace = [&](bool stage_experts) {
        Workspace ws = device_workspace(cfg, w, n_batch, stage_experts);
        if (!holds_logits) ws.logits = 0;
        return ws;
    };
    // Everything resident needs no copy buffers; otherwise they are part of the fixed share.
    s.workspace = workspace(false);
    if (s.fixed() + s.reserve + w.expert_count * w.expert_slot_bytes <= capacity) {
        s.expert_slots = w.expert_count;
    } else {
        s.workspace = workspace(w.moe_layers > 0);
        const uint64_t need = s.fixed() + s.reserve;
        if (need > capacity) {
            s.shortfall = need - capacity;
        } else if (w.expert_slot_bytes > 0) {
            s.expert_slots = std::min<uint64_t>(w.expert_count, (capacity - need) / w.expert_slot_bytes);
        }
    }
    if (s.shortfall == 0) s.unused = capacity - s.fixed() - s.reserve - s.expert_slots * w.expert_slot_bytes;
    return s;
}

std::vector<uint32_t> split_points(const std::vector<uint64_t>& layer_cost, const std::vector<uint64_t>& room) {
    const size_t n = room.size(), n_layer = layer_cost.size();
    if (n < 2) return {};
    double total_cost = 0, total_room = 0;
    for (uint64_t c : layer_cost) total_cost += static_cast<double>(c);
    for (uint64_t r : room) total_room += static_cast<double>(r);
    // Midpoints of the layers' cumulative costs, as fractions of the whole (layers of no cost, or
    // GPUs of no room, count as equal).
    std::vector<double> mid(n_layer);
    double before = 0;
    for (size_t l = 0; l < n_layer; ++l) {
        const double c = static_cast<double>(layer_cost[l]);
        mid[l] = total_cost > 0 ? (before + c / 2) / total_cost : (static_cast<double>(l) + 0.5) / static_cast<double>(n_layer);
        before += c;
    }
    std::vector<uint32_t> firsts(n - 1);
    double room_before = 0;
    for (size_t g = 1; g < n; ++g) {
        room_before += static_cast<double>(room[g - 1]);
        const double edge = total_room > 0 ? room_before / total_room : static_cast<double>(g) / static_cast<double>(n);
        firsts[g - 1] = static_cast<uint32_t>(std::lower_bound(mid.begin(), mid.end(), edge) - mid.begin());
    }
    if (n > n_layer) {
        // Not enough layers: one each to the first GPUs, none to the rest (a plan problem).
        for (size_t g = 1; g < n; ++g) firsts[g - 1] = static_cast<uint32_t>(std::min(g, n_layer));
        return firsts;
    }
    // At least one layer each: push split points up past their predecessors, then down below
    // their successors (each pass keeps what the other established).
    for (size_t i = 0; i + 1 < n; ++i) {
        firsts[i] = std::max<uint32_t>(firsts[i], i == 0 ? 1 : firsts[i - 1] + 1);
    }
    for (size_t i = n - 1; i-- > 0;) {
        firsts[i] = std::min<uint32_t>(firsts[i], (i + 2 == n ? static_cast<uint32_t>(n_layer) : firsts[i + 1]) - 1);
    }
    return firsts;
}

std::string share_layers(const GpuShare& s) {
    if (s.tensor_ranks > 0) return fmt::format("part {} of {} of every layer", s.tensor_rank + 1, s.tensor_ranks);
    if (s.layer_end <= s.layer_begin) return "no layers";
    if (s.layer_end == s.layer_begin + 1) return fmt::format("layer {}", s.layer_begin);
    return fmt::format("layers {}–{}", s.layer_begin, s.layer_end - 1);
}

std::string share_label(const GpuShare& s, size_t index) {
    return s.name.empty() ? fmt::format("GPU {} ({})", index, share_layers(s))
                          : fmt::format("GPU {} ({}, {})", index, s.name, share_layers(s));
}

namespace {

std::string join(const std::vector<uint32_t>& values) {
    std::string out;
    for (uint32_t v : values) out += (out.empty() ? "" : ",") + std::to_string(v);
    return out;
}

bool valid_split_at(const std::vector<uint32_t>& at, size_t n_gpus, uint32_t n_layer) {
    if (at.size() + 1 != n_gpus) return false;
    for (size_t i = 0; i < at.size(); ++i) {
        if (at[i] < 1 || at[i] >= n_layer || (i > 0 && at[i] <= at[i - 1])) return false;
    }
    return true;
}

// Split points by capacity (split_points), from each GPU's room for layers: its capacity less the
// reserve, its workspaces (with copy buffers when the model's experts do not fit in all the GPUs
// together) and, on the last, the tensors of no layer. A GPU with no room is a problem.
std::vector<uint32_t> split_by_capacity(const ModelInventory& inv, const ModelWeights& w, const PlanRequest& req,
                                        const std::vector<uint64_t>& caps, std::vector<std::string>& problems) {
    const ModelConfig& cfg = inv.config;
    const size_t n = caps.size();
    std::vector<uint64_t> layer_dense(cfg.n_layer, 0);
    std::vector<bool> layer_moe(cfg.n_layer, false);
    for (const GgufTensorInfo& t : inv.tensors) {
        const int layer = tensor_layer(t.name);
        if (layer < 0 || static_cast<uint32_t>(layer) >= cfg.n_layer) continue;
        if (tensor_role(t.name) == TensorRole::RoutedExperts && !is_routed_expert_bias(t.name)) layer_moe[layer] = true;
        else layer_dense[layer] += t.n_bytes;
    }
    std::vector<uint64_t> cost(cfg.n_layer);
    uint64_t layers_dense = 0;
    for (uint32_t l = 0; l < cfg.n_layer; ++l) {
        layers_dense += layer_dense[l];
        cost[l] = layer_dense[l] + context_memory(cfg, req.n_ctx, req.kv_type, l, l + 1).total() +
                  (layer_moe[l] ? uint64_t(cfg.n_expert) * w.expert_slot_bytes : 0);
    }
    // Output head and norm, a tied embedding, layers past n_layer: all on the last GPU.
    const uint64_t globals = w.dense_vram_bytes() - std::min(layers_dense, w.dense_vram_bytes());

    const Workspace resident = device_workspace(cfg, w, req.n_batch, false);
    uint64_t need = w.dense_vram_bytes() + context_memory(cfg, req.n_ctx, req.kv_type).total() +
                    w.expert_count * w.expert_slot_bytes, all_caps = 0;
    for (size_t g = 0; g < n; ++g) {
        need += req.vram_reserve + resident.total() - (g == 0 || g + 1 == n ? 0 : resident.logits);
        all_caps += caps[g];
    }
    const Workspace ws = device_workspace(cfg, w, req.n_batch, need > all_caps && w.moe_layers > 0);
    std::vector<uint64_t> room(n);
    for (size_t g = 0; g < n; ++g) {
        const bool last = g + 1 == n;
        const uint64_t workspace = ws.total() - (last || g == 0 ? 0 : ws.logits);
        const uint64_t taken = req.vram_reserve + workspace + (last ? globals : 0);
        room[g] = caps[g] > taken ? caps[g] - taken : 0;
        if (room[g] == 0 && cfg.n_layer >= n) {
            const std::string& name = req.split_gpus[g].name;
            problems.push_back(fmt::format(
                "GPU {}{}: its {} leaves no room for layers after the {} reserve and {} of workspaces{}: drop it from "
                "the split (--gpus, or --vram for `strata plan`), or give it a larger budget",
                g, name.empty() ? std::string() : " (" + name + ")", format_bytes(caps[g]), format_bytes(req.vram_reserve),
                format_bytes(workspace), last ? fmt::format(" and the {} output head", format_bytes(globals)) : std::string()));
        }
    }
    return split_points(cost, room);
}

}  // namespace

LayerSplit split_by_layers(const ModelInventory& inv, const ModelWeights& w, const PlanRequest& req) {
    const ModelConfig& cfg = inv.config;
    const size_t n = req.split_gpus.size();
    LayerSplit out;
    std::vector<uint64_t> caps;
    for (const DeviceMemory& gpu : req.split_gpus) caps.push_back(gpu_capacity(gpu, req.vram_budget));

    std::vector<uint32_t> firsts;
    if (n > cfg.n_layer) {
        out.problems.push_back(fmt::format("--split layer: {} GPUs for a model of {} layers: expected at most one GPU "
                                           "per layer; drop {} from the split (--gpus, or --vram for `strata plan`)",
                                           n, cfg.n_layer, n - cfg.n_layer));
    } else if (!req.split_at.empty()) {
        if (valid_split_at(req.split_at, n, cfg.n_layer)) {
            firsts = req.split_at;
        } else {
            out.problems.push_back(fmt::format("--split-at {}: expected {} value(s) for {} GPUs, strictly increasing, "
                                               "each the first layer of the next GPU (1 to {}); the plan shown splits "
                                               "by capacity instead",
                                               join(req.split_at), n - 1, n, cfg.n_layer - 1));
        }
    }
    // Room problems only when splitting by capacity was asked for: with an explicit (or impossible)
    // split, what does not fit is said by the shares' own shortfalls.
    std::vector<std::string> room_problems;
    if (firsts.empty()) firsts = split_by_capacity(inv, w, req, caps, room_problems);
    if (out.problems.empty()) out.problems = std::move(room_problems);

    // Each GPU's tensors: those of its layers; the tensors of no layer (output head and norm, a tied
    // embedding) on the last. An untied embedding stays in RAM, as with one GPU.
    std::vector<ModelInventory> parts(n);
    for (ModelInventory& part : parts) {
        part.name = inv.name;
        part.config = cfg;
    }
    for (const GgufTensorInfo& t : inv.tensors) {
        const int layer = tensor_layer(t.name);
        if (layer < 0 && tensor_role(t.name) == TensorRole::Embedding && !w.embedding_is_output) continue;
        const size_t g = layer < 0 ? n - 1
                                   : static_cast<size_t>(std::upper_bound(firsts.begin(), firsts.end(),
                                                                          static_cast<uint32_t>(layer)) - firsts.begin());
        parts[g].tensors.push_back(t);
    }
    for (size_t g = 0; g < n; ++g) {
        auto part = summarize_weights(parts[g]);
        STRATA_CHECK(part, "a part of a model that summarized must summarize too");
        ModelWeights part_weights = *part;
        part_weights.expert_slot_bytes = w.expert_slot_bytes;  // one slot size for the whole model
        const uint32_t begin = g == 0 ? 0 : firsts[g - 1];
        const uint32_t end = g + 1 == n ? cfg.n_layer : firsts[g];
        GpuShare s = plan_gpu_share(cfg, part_weights, context_memory(cfg, req.n_ctx, req.kv_type, begin, end).total(),
                                    caps[g], req.vram_reserve, req.n_batch, g == 0 || g + 1 == n);
        s.name = req.split_gpus[g].name;
        s.layer_begin = begin;
        s.layer_end = std::max(begin, end);
        out.shares.push_back(std::move(s));
    }
    return out;
}

}  // namespace strata
