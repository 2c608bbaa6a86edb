// The step loop, the shares, the KV cache and the decode graph of every GPU forward pass
// (gpu_transformer.h); the shared blocks are in gpu_transformer_blocks.cpp.
#include "model/gpu/gpu_transformer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "backend/cpu/matmul.h"
#include "model/weight_slices.h"

namespace strata::gpu {

GpuTransformer::GpuTransformer(const ModelConfig& config, const ComputeOptions& options) : options_(options) {
    config_ = config;
    gpt_oss_ = architecture(config.arch).family == ArchFamily::GptOss;
    int8_matvec_ = options.gpu_tuning.int8_matvec;
    kv_slot_.assign(config.n_layer, 0);
}

std::string GpuTransformer::device_name() const {
    const auto describe = [](const GpuShard& share) {
        const DeviceInfo& d = share.ctx().device();
        return fmt::format("{} {} ({})", runtime_name(), d.name, d.arch);
    };
    uint64_t bytes = 0;
    for (const auto& share : shares_) bytes += share->weight_bytes();
    if (shares_.size() == 1) {
        return fmt::format("{}, {:.2f} GiB of weights in VRAM", describe(*shares_[0]), static_cast<double>(bytes) / (1 << 30));
    }
    if (tensor_) {
        std::string out = fmt::format("tensor split over {} GPUs ({} sharded; all-reduce by {}):", shares_.size(),
                                      shards_attention() ? "heads, FFN columns and experts" : "experts",
                                      collective_->describe());
        for (size_t r = 0; r < shares_.size(); ++r) {
            const auto [e0, e1] = expert_range(r);
            const int64_t h0 = shards_attention() ? static_cast<int64_t>(r) * heads() : 0;
            const std::string attention = shards_attention() ? fmt::format("heads {}-{}", h0, h0 + heads() - 1)
                                          : r == 0            ? std::string("attention")
                                                              : std::string("no attention");
            out += fmt::format(" [GPU {} {}: {}{}, {:.2f} GiB of weights]", shares_[r]->ordinal(), describe(*shares_[r]),
                               attention, config_.n_expert ? fmt::format(", experts {}-{}", e0, e1 - 1) : std::string(),
                               static_cast<double>(shares_[r]->weight_bytes()) / (1 << 30));
        }
        return out;
    }
    std::vector<int> cards;
    for (const auto& share : shares_) {
        if (std::find(cards.begin(), cards.end(), share->ordinal()) == cards.end()) cards.push_back(share->ordinal());
    }
    std::string out = cards.size() == shares_.size()
                          ? fmt::format("layers split over {} GPUs:", shares_.size())
                          : fmt::format("layers split into {} shares over {} GPU(s):", shares_.size(), cards.size());
    for (const auto& share : shares_) {
        out += fmt::format(" [GPU {} {}: layers {}-{}, {:.2f} GiB of weights]", share->ordinal(), describe(*share),
                           share->layer_begin(), share->layer_end() - 1,
                           static_cast<double>(share->weight_bytes()) / (1 << 30));
    }
    out += peer_access_ ? "; activations cross peer to peer" : "; activations cross through host memory";
    return out;
}

KvCache GpuTransformer::make_kv_cache(int64_t n_ctx) const {
    const ModelConfig& c = config_;
    auto storage = std::make_unique<GpuKvStorage>();
    for (size_t s = 0; s < shares_.size(); ++s) {
        std::string error;
        // A tensor split's rank keeps the rows of its own KV heads.
        const int64_t kv_heads = heads_kv();
        auto cache = std::make_unique<GpuKvCache>(shares_[s]->pool(), kv_layers_per_share_[s], n_ctx,
                                                  kv_heads * c.head_dim_k, kv_heads * c.head_dim_v,
                                                  options_.kv_type, &error);
        if (!cache->ok()) {
            // Placement planning (plan/) refuses such a context before loading; if it gets here, say why.
            std::fprintf(stderr, "strata: the KV cache for %lld positions does not fit on GPU %d: %s (use a smaller --ctx-size)\n",
                         static_cast<long long>(n_ctx), shares_[s]->ordinal(), error.c_str());
            std::abort();
        }
        storage->caches.push_back(std::move(cache));
    }
    return KvCache(n_ctx, c.kv_dim_k(), c.kv_dim_v(), std::move(storage));
}

namespace {
GpuKvStorage& device_cache(KvCache& kv, size_t n_shares) {
    auto* storage = dynamic_cast<GpuKvStorage*>(kv.storage());
    STRATA_CHECK(storage != nullptr && storage->caches.size() == n_shares,
                 "GPU forward with a KV cache this model did not make (use make_kv_cache)");
    return *storage;
}
}  // namespace

void GpuTransformer::forward(const Batch& batch, KvCache& kv, float* logits, LogitsFor which, CpuContext& cpu) {
    forward_one(batch, kv, nullptr, logits, which, cpu);
}

void GpuTransformer::forward_one(const Batch& batch, KvCache& kv, RecurrentState* state, float* logits, LogitsFor which,
                                 CpuContext& cpu) {
    GpuKvStorage& storage = device_cache(kv, shares_.size());
    const int64_t n = batch.n_tokens;
    STRATA_CHECK(batch.pos0 + n <= kv.n_ctx(), "batch runs past the KV cache");
    STRATA_CHECK(logits != nullptr || which == LogitsFor::Last, "only the last row's logits can stay on the device");
    seqs_.assign(1, SeqRows{0, n, batch.pos0, &storage, state});
    GpuContext& g = shares_[0]->ctx();
    g.activate();
    ++passes_;
    pass_rows_ = which == LogitsFor::Last ? 1 : n;
    const float* embedded = embed_on_host(batch.tokens, n, cpu);
    if (n == 1 && decode_graph_ && decode_graph_->enabled()) {
        const auto step = [&](const int32_t* io, const float* row) {
            return queue_forward(row, io + 1, 1, LogitsFor::Last, nullptr, 0, cpu);
        };
        // Without host logits the graph is only queued: the caller's sampling (or fetch) waits.
        pass_logits_ = decode_graph_->run(batch.tokens[0], batch.positions[0], embedded, graph_addresses(storage), step, logits);
        if (pass_logits_ != nullptr) return;
    }
    auto* positions = static_cast<int32_t*>(g.scratch(kPositions, static_cast<uint64_t>(n) * sizeof(int32_t)));
    g.upload(positions, batch.positions, static_cast<uint64_t>(n) * sizeof(int32_t));
    pass_logits_ = queue_forward(embedded, positions, n, which, nullptr, 0, cpu);
    if (logits != nullptr) g.download(logits, pass_logits_, static_cast<uint64_t>(pass_rows_) * config_.n_vocab * sizeof(float));
    g.synchronize();  // the first share's stream waited for the last one, which waited for the rest
    for (auto& share : shares_) share->flush_profile();
}

void GpuTransformer::forward_multi(std::span<const SequenceStep> steps, CpuContext& cpu) {
    if (steps.size() == 1) {
        const SequenceStep& s = steps[0];
        std::vector<int32_t> positions(static_cast<size_t>(s.n_tokens));
        for (int64_t i = 0; i < s.n_tokens; ++i) positions[static_cast<size_t>(i)] = static_cast<int32_t>(s.pos0 + i);
        const Batch batch{s.tokens, positions.data(), s.n_tokens, s.pos0};
        if (s.state) forward_with_state(batch, *s.kv, *s.state, s.logits, s.which, cpu);
        else forward(batch, *s.kv, s.logits, s.which, cpu);
        return;
    }
    // Rows of every step, in order; the logits wanted: each step's last row, or all of its rows.
    std::vector<int32_t> tokens, positions, out_rows;
    seqs_.clear();
    bool any_host_logits = false;
    for (const SequenceStep& s : steps) {
        STRATA_CHECK(s.pos0 + s.n_tokens <= s.kv->n_ctx(), "batch runs past the KV cache");
        STRATA_CHECK(s.logits != nullptr || s.which == LogitsFor::Last, "only a step's last row can stay on the device");
        any_host_logits = any_host_logits || s.logits != nullptr;
        RecurrentState* state = s.state && !s.state->empty() ? s.state : nullptr;
        if (state) {  // as the CPU hybrids: a step at position 0 starts over; no rewinding
            if (s.pos0 == 0) state->clear();
            STRATA_CHECK(s.pos0 == state->n_past(),
                         "a recurrent state cannot be rewound: the batch must start where the last one ended");
        }
        const int64_t first = static_cast<int64_t>(tokens.size());
        seqs_.push_back(SeqRows{first, s.n_tokens, s.pos0, &device_cache(*s.kv, shares_.size()), state});
        for (int64_t i = 0; i < s.n_tokens; ++i) {
            tokens.push_back(s.tokens[i]);
            positions.push_back(static_cast<int32_t>(s.pos0 + i));
            if (s.which == LogitsFor::All || i + 1 == s.n_tokens) out_rows.push_back(static_cast<int32_t>(first + i));
        }
    }
    const int64_t n = static_cast<int64_t>(tokens.size()), n_out = static_cast<int64_t>(out_rows.size());
    GpuContext& g = shares_[0]->ctx();
    g.activate();
    ++passes_;
    pass_rows_ = n_out;
    const float* embedded = embed_on_host(tokens.data(), n, cpu);
    auto* d_positions = static_cast<int32_t*>(g.scratch(kPositions, static_cast<uint64_t>(n) * sizeof(int32_t)));
    auto* d_out_rows = static_cast<int32_t*>(g.scratch(kOutRows, static_cast<uint64_t>(n_out) * sizeof(int32_t)));
    g.upload(d_positions, positions.data(), static_cast<uint64_t>(n) * sizeof(int32_t));
    g.upload(d_out_rows, out_rows.data(), static_cast<uint64_t>(n_out) * sizeof(int32_t));
    pass_logits_ = queue_forward(embedded, d_positions, n, LogitsFor::All, d_out_rows, n_out, cpu);
    const uint64_t vocab = config_.n_vocab;
    std::vector<float> logits(any_host_logits ? static_cast<size_t>(n_out) * vocab : 0);
    if (any_host_logits) g.download(logits.data(), pass_logits_, logits.size() * sizeof(float));
    g.synchronize();
    for (auto& share : shares_) share->flush_profile();
    size_t row = 0;
    for (const SequenceStep& s : steps) {
        const int64_t rows = s.which == LogitsFor::All ? s.n_tokens : 1;
        if (s.logits) std::copy_n(logits.data() + row * vocab, static_cast<size_t>(rows) * vocab, s.logits);
        row += static_cast<size_t>(rows);
        if (s.state && !s.state->empty()) s.state->advance(s.n_tokens);
    }
}

float* GpuTransformer::device_row(const DeviceLogitsRow& row) {
    STRATA_CHECK(row.pass == passes_ && pass_logits_ != nullptr,
                 "device logits read after a later forward pass replaced them (sample before the next pass)");
    STRATA_CHECK(row.row >= 0 && row.row < pass_rows_, "device logits row outside the last pass");
    // The first share's own scratch (kLogits): writable; const only as queue_forward hands it out.
    return const_cast<float*>(pass_logits_) + row.row * config_.n_vocab;
}

void GpuTransformer::fetch_logits(const DeviceLogitsRow& row, float* out) {
    GpuContext& g = shares_[0]->ctx();
    g.activate();
    g.download(out, device_row(row), static_cast<uint64_t>(config_.n_vocab) * sizeof(float));
    g.synchronize();
}

void GpuTransformer::select_candidates(const DeviceLogitsRow& row, const CandidateQuery& query, CandidateSet& out) {
    selector_.select(device_row(row), query, out, shares_[0]->ctx());
}

// A split that leaves a layer out or counts one twice would run a different model: checked here.
Status GpuTransformer::make_shares() {
    const uint32_t n_layer = config_.n_layer;
    if (!options_.tensor_split.empty()) return make_tensor_shares();
    if (options_.layer_split.empty()) {
        shares_.push_back(std::make_unique<GpuShard>(options_.gpu_ordinal, options_.vram_budget, 0, n_layer, options_.gpu_tuning));
        return Status::ok();
    }
    uint32_t expect = 0;
    for (const GpuLayerShare& s : options_.layer_split) {
        if (s.layer_begin != expect || s.layer_end <= s.layer_begin || s.layer_end > n_layer) {
            return Status::error("--split layer: GPU {} was given layers {}-{}, expected a non-empty run starting at "
                                 "layer {} of {}",
                                 s.ordinal, s.layer_begin, static_cast<int64_t>(s.layer_end) - 1, expect, n_layer);
        }
        expect = s.layer_end;
        shares_.push_back(std::make_unique<GpuShard>(s.ordinal, s.vram_budget, s.layer_begin, s.layer_end, options_.gpu_tuning));
    }
    if (expect != n_layer) {
        return Status::error("--split layer: the GPUs hold layers 0-{} of {}", static_cast<int64_t>(expect) - 1, n_layer);
    }
    // The next share reads the previous one's activations, and the first share the last one's
    // logits; peer access makes those direct copies.
    peer_access_ = enable_peer_access(shares_.front()->ordinal(), shares_.back()->ordinal(), options_.gpu_tuning);
    for (size_t s = 1; s < shares_.size(); ++s) {
        peer_access_ = enable_peer_access(shares_[s]->ordinal(), shares_[s - 1]->ordinal(), options_.gpu_tuning) && peer_access_;
    }
    return Status::ok();
}

Status GpuTransformer::make_tensor_shares() {
    const ModelConfig& c = config_;
    const std::vector<GpuLayerShare>& gpus = options_.tensor_split;
    const auto n = static_cast<int64_t>(gpus.size());
    if (!supports_tensor_split()) {
        return Status::error("--split tensor: not built for {} models yet (their recurrent or latent attention layers "
                             "have no sharded form); use --split layer",
                             c.arch_name());
    }
    if (options_.routed_experts) {
        return Status::error("--split tensor keeps every expert in VRAM; this plan tiers them (use --split layer, whose "
                             "GPUs each cache their layers' experts)");
    }
    if (shards_attention() && (c.n_head_kv == 0 || c.n_head_kv % n != 0)) {
        return Status::error("--split tensor over {} GPUs: the model's {} KV heads do not divide among them (use {} or "
                             "--split layer)",
                             n, c.n_head_kv, n == 2 ? std::string("--split layer") : std::string("a divisor of the head count"));
    }
    if (c.n_expert > 0 && c.n_expert < static_cast<uint32_t>(n)) {
        return Status::error("--split tensor over {} GPUs: the model has only {} experts per layer", n, c.n_expert);
    }
    tensor_ = true;
    for (const GpuLayerShare& g : gpus) {
        if (g.routed_experts) return Status::error("--split tensor keeps every expert in VRAM (no tiers)");
        shares_.push_back(std::make_unique<GpuShard>(g.ordinal, g.vram_budget, 0, c.n_layer, options_.gpu_tuning));
    }
    peer_access_ = true;
    for (size_t a = 0; a < shares_.size(); ++a) {
        for (size_t b = 0; b < shares_.size(); ++b) {
            if (a != b) peer_access_ = enable_peer_access(shares_[a]->ordinal(), shares_[b]->ordinal(), options_.gpu_tuning) && peer_access_;
        }
    }
    std::vector<GpuContext*> contexts;
    for (auto& share : shares_) contexts.push_back(&share->ctx());
    std::string error;
    collective_ = make_gpu_collective(contexts, &error);
    if (!collective_) return Status::error("--split tensor: {}", error);
    return Status::ok();
}

void GpuTransformer::set_kv_layers(std::vector<bool> has_kv) {
    kv_slot_.assign(has_kv.size(), -1);
    kv_layers_per_share_.assign(shares_.size(), 0);
    int64_t kv_layers = 0;
    for (size_t il = 0; il < has_kv.size(); ++il) {
        if (!has_kv[il]) continue;
        kv_slot_[il] = tensor_ ? kv_layers++ : kv_layers_per_share_[share_of(il)]++;
    }
    if (tensor_) {  // every rank holds every layer, or the first rank the whole cache
        kv_layers_per_share_.assign(shares_.size(), shards_attention() ? kv_layers : 0);
        kv_layers_per_share_[0] = kv_layers;
    }
}

Status GpuTransformer::finish_load(const GgufFile& file, const Weight& token_embd, const Weight& output_norm,
                                   const Weight& output, const std::vector<Weight>& input_norms) {
    if (kv_layers_per_share_.empty()) set_kv_layers(std::vector<bool>(config_.n_layer, true));
    GpuShard& first = *shares_.front();
    // The head: on the last share of a layer split, on the first rank of a tensor split.
    GpuShard& last = tensor_ ? first : *shares_.back();
    // The embedding table stays in RAM, as the memory plan counts it: a step looks its tokens'
    // rows up on the host and copies them up (embed_on_host). A tied table is uploaded as the head.
    token_embd_ = token_embd;
    STRATA_ASSIGN_OR_RETURN(output_norm_, last.upload(output_norm, false));
    STRATA_ASSIGN_OR_RETURN(output_, last.upload(output, true));
    // Each share but the last computes the input norm of the next share's first layer.
    boundary_norms_.resize(shares_.size());
    for (size_t s = 0; !tensor_ && s + 1 < shares_.size(); ++s) {
        STRATA_ASSIGN_OR_RETURN(boundary_norms_[s], shares_[s]->upload(input_norms[shares_[s]->layer_end()], false));
    }
    if (!rope_.inv_freq.empty()) {  // the table's frequencies, computed once on the host, on every share
        for (auto& share : shares_) {
            STRATA_ASSIGN_OR_RETURN(const void* table, share->upload_table(rope_.inv_freq.data(),
                                                                           rope_.inv_freq.size() * sizeof(double),
                                                                           "the rope frequencies"));
            rope_freq_.push_back(static_cast<const double*>(table));
        }
    }
    if (config_.n_expert > 0) {
        for (auto& share : shares_) STRATA_TRY(share->make_route_counters(config_.n_layer));
    }
    // Sampling reduces the logits where they end, on the first share (plan: the logits' term).
    STRATA_TRY(selector_.allocate(first.ctx(), config_.n_vocab));
    for (auto& share : shares_) share->ctx().synchronize();  // the copies read the mapped file
    for (size_t s = 0; s < shares_.size(); ++s) {
        const RoutedExpertsFactory& factory =
            options_.layer_split.empty() ? options_.routed_experts : options_.layer_split[s].routed_experts;
        if (!factory) continue;
        STRATA_ASSIGN_OR_RETURN(auto routed, factory(file, shares_[s]->ctx()));
        shares_[s]->set_routed(std::move(routed));
    }
    // The tiers' host work and the profiler's events cannot be replayed. Several shares are one
    // graph: the later shares' streams join the capture through the boundary events, which needs
    // every boundary copy to be a direct one (peer access on).
    const bool any_tiers = std::any_of(shares_.begin(), shares_.end(), [](const auto& sh) { return sh->routed() != nullptr; });
    // A tensor split replays when its all-reduce can be captured.
    const bool capturable = tensor_ ? peer_access_ && collective_->capturable() : shares_.size() == 1 || peer_access_;
    if (!any_tiers && !first.profiling() && capturable) {
        decode_graph_ = std::make_unique<DecodeGraph>(first.ctx(), config_.n_vocab, config_.n_embd + host_extra_width());
    }
    return Status::ok();
}

Status GpuTransformer::upload_experts(const MoeFfnWeights& w, const ExpertBiases& biases, size_t share_index,
                                      GpuMoeWeights& out) {
    GpuShard& sh = *shares_[share_index];
    STRATA_ASSIGN_OR_RETURN(out.router, sh.upload(w.router, true));
    STRATA_ASSIGN_OR_RETURN(out.router_bias, sh.upload(biases.router, false));
    if (tiered(share_index)) return Status::ok();  // the tiers hold the experts and their biases
    STRATA_ASSIGN_OR_RETURN(out.gate_bias, sh.upload(biases.gate, false));
    STRATA_ASSIGN_OR_RETURN(out.up_bias, sh.upload(biases.up, false));
    STRATA_ASSIGN_OR_RETURN(out.down_bias, sh.upload(biases.down, false));
    STRATA_ASSIGN_OR_RETURN(out.gate_exps, sh.upload(w.gate_exps, true));
    STRATA_ASSIGN_OR_RETURN(out.up_exps, sh.upload(w.up_exps, true));
    STRATA_ASSIGN_OR_RETURN(out.down_exps, sh.upload(w.down_exps, true));
    return Status::ok();
}

size_t GpuTransformer::share_of(size_t layer) const {
    if (tensor_) return 0;
    for (size_t s = 0; s < shares_.size(); ++s)
        if (layer < shares_[s]->layer_end()) return s;
    return shares_.size() - 1;
}

bool GpuTransformer::tiered(size_t share_index) const {
    return options_.layer_split.empty() ? static_cast<bool>(options_.routed_experts)
                                        : static_cast<bool>(options_.layer_split[share_index].routed_experts);
}

// What a captured step holds that DecodeGraph does not watch itself: every device address of the
// cache it reads or writes (and the architecture's other state), and the scratch generations of
// the shares after the first (their buffers may move while the first share's stay put), as
// pseudo-addresses.
std::vector<const void*> GpuTransformer::graph_addresses(const GpuKvStorage& kv) const {
    std::vector<const void*> a;
    for (size_t s = 0; s < shares_.size(); ++s) {
        const GpuKvCache& cache = *kv.caches[s];
        for (int64_t il = 0; il < kv_layers_per_share_[s]; ++il) {
            a.push_back(cache.keys(il));
            a.push_back(cache.values(il));
        }
        if (s > 0) a.push_back(reinterpret_cast<const void*>(static_cast<uintptr_t>(shares_[s]->ctx().scratch_generation())));
    }
    add_graph_addresses(a);
    return a;
}

// Queues the whole pass for n tokens (their embedding rows in host memory, positions on the
// first share's device); returns the
// device logits on the first share: the last row's (LogitsFor::Last) or every row's. Nothing here
// reads a host value that changes from one decode step to the next, so a step can be captured
// whole, across shares: each later share copies what it needs from the one before after waiting
// on its event, and the first share waits for the last before the logits.
const float* GpuTransformer::queue_forward(const float* host_rows, const int32_t* positions, int64_t n, LogitsFor which,
                                           const int32_t* out_rows, int64_t n_out, CpuContext& cpu) {
    if (tensor_) {
        float* h = queue_tensor_layers(host_rows, positions, n, cpu);
        return queue_output(h, n, which, out_rows, n_out);
    }
    const ModelConfig& c = config_;
    const int64_t e = c.n_embd;
    float* prev_x = nullptr;
    float* prev_h = nullptr;
    void* prev_hq = nullptr;
    const int32_t* prev_pos = nullptr;
    float* h = nullptr;
    for (size_t s = 0; s < shares_.size(); ++s) {
        cur_ = shares_[s].get();
        cur_index_ = s;
        GpuContext& g = cur_->ctx();
        g.activate();
        float* x = g.scratch_floats(kResidual, static_cast<uint64_t>(n * e));
        h = g.scratch_floats(kNormed, static_cast<uint64_t>(n * e));
        hq_ = nullptr;
        void* hq_buffer = nullptr;
        if (takes_int8(n, e)) {
            hq_buffer = g.scratch(kQ8Normed, gpu_q8_bytes(n, e));
            hq_view_ = gpu_q8_view(hq_buffer, n, e);
            hq_ = &hq_view_;
        }
        const int32_t* pos = positions;
        if (s == 0) {
            op("upload embedding rows", [&] { g.upload(x, host_rows, static_cast<uint64_t>(n * e) * sizeof(float)); });
            host_extras_ = host_rows + n * e;
            // Each block leaves h = the next norm of x: the first layer's input norm is the only
            // one computed alone.
            const float* first_norm = c.n_layer == 0 ? output_norm_.f32() : input_norm(0);
            op("rms_norm attn_norm", [&] { gpu_rms_norm(x, first_norm, n, e, c.rms_eps, h, g, hq_); });
        } else {
            auto* p = static_cast<int32_t*>(g.scratch(kPositions, static_cast<uint64_t>(n) * sizeof(int32_t)));
            pos = p;
            GpuShard& prev = *shares_[s - 1];
            prev.done().make_wait(g.stream());
            op("copy activations", [&] {
                const int from = prev.ordinal(), to = cur_->ordinal();
                const uint64_t bytes = static_cast<uint64_t>(n * e) * sizeof(float);
                copy_peer_async(p, to, prev_pos, from, static_cast<uint64_t>(n) * sizeof(int32_t), g.stream());
                copy_peer_async(x, to, prev_x, from, bytes, g.stream());
                copy_peer_async(h, to, prev_h, from, bytes, g.stream());
                if (hq_buffer) copy_peer_async(hq_buffer, to, prev_hq, from, gpu_q8_bytes(n, e), g.stream());
            });
        }
        for (uint32_t il = cur_->layer_begin(); il < cur_->layer_end(); ++il) {
            const float* next_norm = il + 1 == cur_->layer_end()
                                         ? (s + 1 < shares_.size() ? boundary_norms_[s].f32() : output_norm_.f32())
                                         : input_norm(il + 1);
            queue_layer(il, x, h, n, pos, kv_slot_[il], next_norm, cpu);
        }
        if (cur_->routed()) cur_->routed()->end_forward(g);
        if (s + 1 < shares_.size()) cur_->done().record(g.stream());
        prev_x = x, prev_h = h, prev_hq = hq_buffer, prev_pos = pos;
    }
    return queue_output(h, n, which, out_rows, n_out);
}

// The head on the current share (the last of a layer split, the first rank of a tensor split);
// the logits end on the first share, whose stream has then waited for every share.
const float* GpuTransformer::queue_output(float* h, int64_t n, LogitsFor which, const int32_t* out_rows, int64_t n_out) {
    const ModelConfig& c = config_;
    const int64_t e = c.n_embd;
    GpuContext& g = cur_->ctx();
    const int64_t first = which == LogitsFor::Last ? n - 1 : 0;
    const int64_t rows = out_rows ? n_out : n - first;
    const uint64_t logit_count = static_cast<uint64_t>(rows) * c.n_vocab;
    float* out = g.scratch_floats(kLogits, logit_count);
    if (out_rows) {  // several sequences: their wanted rows of h gathered first (rows of f32 as a "weight")
        DeviceWeight h_rows;
        h_rows.data = reinterpret_cast<const uint8_t*>(h);
        h_rows.ne[0] = e, h_rows.ne[1] = n;
        h_rows.row_bytes = static_cast<uint64_t>(e) * sizeof(float);
        float* gathered = g.scratch_floats(kOutH, static_cast<uint64_t>(rows * e));
        op("get_rows output rows", [&] { gpu_get_rows(h_rows, out_rows, rows, gathered, g); });
        GpuQ8Rows gq;
        const GpuQ8Rows* gq_used = quantized(gathered, rows, e, rows, kQ8Attn, gq);
        op("matmul output", [&] { gpu_matmul(output_, 0, gathered, rows, out, g, gq_used); });
    } else {
        GpuQ8Rows last;
        if (hq_) last = gpu_q8_rows_from(*hq_, first);
        op("matmul output", [&] { gpu_matmul(output_, 0, h + first * e, rows, out, g, hq_ ? &last : nullptr); });
    }
    if (shares_.size() == 1 || cur_ == shares_.front().get()) return out;
    // The logits go back to the first share, whose stream thereby waits for every share: the
    // caller (or a captured step) synchronizes one stream and downloads from one device.
    cur_->done().record(g.stream());
    GpuShard& home = *shares_.front();
    home.ctx().activate();
    cur_->done().make_wait(home.ctx().stream());
    float* home_out = home.ctx().scratch_floats(kLogits, logit_count);
    copy_peer_async(home_out, home.ordinal(), out, cur_->ordinal(), logit_count * sizeof(float), home.ctx().stream());
    return home_out;
}

Status GpuTransformer::keep_rank_experts(MoeFfnWeights& moe, size_t r) const {
    const auto [first, end] = expert_range(r);
    STRATA_ASSIGN_OR_RETURN(moe.gate_exps, weight_matrices(moe.gate_exps, first, end - first));
    STRATA_ASSIGN_OR_RETURN(moe.up_exps, weight_matrices(moe.up_exps, first, end - first));
    STRATA_ASSIGN_OR_RETURN(moe.down_exps, weight_matrices(moe.down_exps, first, end - first));
    return Status::ok();
}

float* GpuTransformer::empty_part(int64_t n) {
    GpuContext& g = cur_->ctx();
    const uint64_t bytes = static_cast<uint64_t>(n * config_.n_embd) * sizeof(float);
    float* part = g.scratch_floats(kProj, bytes / sizeof(float));
    op("zero part", [&] { memset_async(part, 0, bytes, g.stream()); });
    return part;
}

void GpuTransformer::select_rank(size_t r) {
    cur_ = shares_[r].get();
    cur_index_ = r;
    cur_->ctx().activate();
    hq_ = rank_hq_[r].q ? &rank_hq_[r] : nullptr;
}

// Every rank runs every layer on its own stream; the host queues them part by part, so that each
// all-reduce (one group call over all ranks) comes after every rank's part. Rank 0 takes the
// embedding rows and positions; the others copy them from it once its event says they are there.
float* GpuTransformer::queue_tensor_layers(const float* host_rows, const int32_t* positions, int64_t n, CpuContext& cpu) {
    const ModelConfig& c = config_;
    const int64_t e = c.n_embd;
    const size_t n_ranks = shares_.size();
    std::vector<float*> x(n_ranks), h(n_ranks), part(n_ranks);
    std::vector<const int32_t*> pos(n_ranks, positions);
    rank_hq_.assign(n_ranks, GpuQ8Rows{});
    for (size_t r = 0; r < n_ranks; ++r) {
        GpuContext& g = shares_[r]->ctx();
        g.activate();
        x[r] = g.scratch_floats(kResidual, static_cast<uint64_t>(n * e));
        h[r] = g.scratch_floats(kNormed, static_cast<uint64_t>(n * e));
        cur_ = shares_[r].get();  // takes_int8 asks the current share's device
        if (takes_int8(n, e)) rank_hq_[r] = gpu_q8_view(g.scratch(kQ8Normed, gpu_q8_bytes(n, e)), n, e);
    }
    select_rank(0);
    op("upload embedding rows", [&] {
        shares_[0]->ctx().upload(x[0], host_rows, static_cast<uint64_t>(n * e) * sizeof(float));
    });
    shares_[0]->done().record(shares_[0]->ctx().stream());
    for (size_t r = 1; r < n_ranks; ++r) {
        select_rank(r);
        GpuContext& g = cur_->ctx();
        auto* p = static_cast<int32_t*>(g.scratch(kPositions, static_cast<uint64_t>(n) * sizeof(int32_t)));
        pos[r] = p;
        shares_[0]->done().make_wait(g.stream());
        op("copy activations", [&] {
            const int from = shares_[0]->ordinal(), to = cur_->ordinal();
            copy_peer_async(p, to, positions, from, static_cast<uint64_t>(n) * sizeof(int32_t), g.stream());
            copy_peer_async(x[r], to, x[0], from, static_cast<uint64_t>(n * e) * sizeof(float), g.stream());
        });
    }
    const float* first_norm = c.n_layer == 0 ? output_norm_.f32() : nullptr;
    for (size_t r = 0; r < n_ranks; ++r) {
        select_rank(r);
        const float* norm = first_norm ? first_norm : input_norm(0);
        op("rms_norm attn_norm", [&] { gpu_rms_norm(x[r], norm, n, e, c.rms_eps, h[r], cur_->ctx(), hq_); });
        if (first_norm) break;  // no layers: only rank 0's h is read
    }
    const uint64_t count = static_cast<uint64_t>(n * e);
    for (uint32_t il = 0; il < c.n_layer; ++il) {
        const bool last = il + 1 == c.n_layer;
        for (size_t r = 0; r < n_ranks; ++r) {
            select_rank(r);
            part[r] = queue_attention_part(il, h[r], n, pos[r], kv_slot_[il]);
        }
        collective_->all_reduce_sum(part, count);
        for (size_t r = 0; r < n_ranks; ++r) {
            select_rank(r);
            op("add_rms_norm ffn_norm", [&] { gpu_add_rms_norm(x[r], part[r], ffn_norm_of(il), n, e, c.rms_eps, h[r], cur_->ctx(), hq_); });
        }
        for (size_t r = 0; r < n_ranks; ++r) {
            select_rank(r);
            part[r] = queue_ffn_part(il, h[r], n, cpu);
        }
        collective_->all_reduce_sum(part, count);
        // After the last layer only rank 0's h is read (by the head).
        for (size_t r = 0; r < (last ? 1 : n_ranks); ++r) {
            select_rank(r);
            const float* next_norm = last ? output_norm_.f32() : input_norm(il + 1);
            op("add_rms_norm next", [&] { gpu_add_rms_norm(x[r], part[r], next_norm, n, e, c.rms_eps, h[r], cur_->ctx(), hq_); });
        }
    }
    // Rank 0's stream waits for every rank, so one synchronize (or one captured graph) covers the step.
    for (size_t r = 1; r < n_ranks; ++r) {
        shares_[r]->ctx().activate();
        shares_[r]->done().record(shares_[r]->ctx().stream());
        shares_[r]->done().make_wait(shares_[0]->ctx().stream());
    }
    select_rank(0);
    return h[0];
}

const float* GpuTransformer::embed_on_host(const int32_t* tokens, int64_t n, CpuContext& cpu) {
    const int64_t e = config_.n_embd, extra = host_extra_width();
    const uint64_t bytes = static_cast<uint64_t>(n * (e + extra)) * sizeof(float);
    if (embedded_.bytes() < bytes) {
        // Page-locked, so the copy up runs asynchronously; the previous step's copy has finished
        // (every forward synchronizes before it returns).
        std::string error;
        embedded_ = PinnedBuffer();
        STRATA_CHECK(embedded_.allocate(bytes + bytes / 4, &error), "page-locked memory for the embedding rows");
    }
    float* rows = embedded_.as<float>();
    for (int64_t t = 0; t < n; ++t) {
        STRATA_CHECK(tokens[t] >= 0 && static_cast<uint32_t>(tokens[t]) < config_.n_vocab, "token id outside the vocabulary");
    }
    if (n < 16) {
        cpu_get_rows(token_embd_, tokens, n, rows);
    } else {  // a prompt: its rows dequantized by the pool (a few MB of floats)
        cpu.pool().parallel_for(n, [&](int64_t t0, int64_t t1, int) {
            cpu_get_rows(token_embd_, tokens + t0, t1 - t0, rows + t0 * e);
        });
    }
    // The extras after all n embedding rows: for one token, [embedding | extras] is one row.
    if (extra > 0) fill_host_extras(tokens, n, rows + n * e, cpu);
    return rows;
}

const GpuQ8Rows* GpuTransformer::quantized(const float* x, int64_t rows, int64_t width, int64_t n, int slot,
                                           GpuQ8Rows& out) {
    if (!takes_int8(n, width)) return nullptr;
    op("quantize_q8", [&] { out = gpu_quantize_q8(x, rows, width, slot, cur_->ctx()); });
    return &out;
}

bool GpuTransformer::takes_int8(int64_t n, int64_t width) const {
    if (!int8_matvec_ || width % 32 != 0) return false;
    return n < kGpuTiledMinTokens || gpu_prompt_takes_q8(cur_->ctx());  // prompts: the int8 MMQ tiles
}

}  // namespace strata::gpu
