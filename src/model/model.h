#pragma once
// A loaded model: its configuration, its weights (views into the mapped GGUF) and its forward
// pass. One implementation per architecture family, in model/arch/, written from the shared
// blocks of model/blocks/.
//
//   STRATA_ASSIGN_OR_RETURN(auto model, Model::load(gguf));
//   model->set_kv_type(KvCacheType::F16);                      // optional: f32 unless set
//   KvCache kv = model->make_kv_cache(n_ctx);
//   model->forward(batch, kv, logits, LogitsFor::All, ctx);   // n_tokens × n_vocab floats
//   RecurrentState rs = model->make_recurrent_state();          // hybrid models' other per-sequence state
//   model->forward_with_state(batch, kv, rs, logits, LogitsFor::Last, ctx);
//   SequenceStep steps[] = {{a_tokens, 1, a_pos, &kv_a, &rs_a, a_logits}, {b_tokens, 16, b_pos, &kv_b, &rs_b, b_logits}};
//   model->forward_multi(steps, ctx);                            // several sequences, one pass

#include <memory>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include "backend/cpu/cpu_context.h"
#include "core/status.h"
#include "gguf/reader.h"
#include "kv/kv_cache.h"
#include "kv/recurrent_state.h"
#include "model/blocks/blocks.h"
#include "model/config.h"
#include "backend/logit_candidates.h"

namespace strata {

class PleTable;
struct PleTableOptions;

enum class LogitsFor { All, Last };

// One sequence's part of a multi-sequence forward pass (Model::forward_multi): its tokens at
// positions pos0 .. pos0 + n_tokens - 1, its own cache (holding every earlier position) and
// recurrent state, and where its logits go.
struct SequenceStep {
    const int32_t* tokens = nullptr;
    int64_t n_tokens = 0;
    int64_t pos0 = 0;
    KvCache* kv = nullptr;
    RecurrentState* state = nullptr;  // required by hybrid models; attention-only ones ignore it
    // n_tokens rows of n_vocab, or one row for LogitsFor::Last. Null (LogitsFor::Last only, on
    // a model that keeps_logits_on_device): the row stays on the device (see below).
    float* logits = nullptr;
    LogitsFor which = LogitsFor::Last;
};

// A row of logits a forward pass left on the model's device: the pass (Model::passes() right
// after it) and the row's index among the pass's rows (the step's index in forward_multi).
struct DeviceLogitsRow {
    uint64_t pass = 0;
    int64_t row = 0;
};

class Model {
public:
    virtual ~Model() = default;
    const ModelConfig& config() const { return config_; }

    // Validates every tensor's presence, shape and type before returning; the file must outlive
    // the model (weights point into its mapping).
    static Result<std::unique_ptr<Model>> load(const GgufFile& file);

    // Rows for the attention layers only (hybrid models' recurrent layers keep a RecurrentState
    // instead), of kv_type(). A backend that keeps the cache elsewhere (the GPU) returns one
    // holding its own storage.
    virtual KvCache make_kv_cache(int64_t n_ctx) const;
    // The element type of the host caches make_kv_cache returns. f32 unless set: the exact cache
    // the reference tests hold the engine to; the commands set `--kv-type` (f16 by default).
    // q8_0 needs heads of whole 32-value blocks (kv_type_fits; load_model_on says so to the user).
    void set_kv_type(KvCacheType type) {
        STRATA_CHECK(kv_type_fits(type, config_.head_dim_k, config_.head_dim_v), "KV cache type does not fit the heads");
        kv_type_ = type;
    }
    KvCacheType kv_type() const { return kv_type_; }
    // The CPU kernels' switches the commands asked for (backend/cpu/cpu_tuning.h): whoever makes
    // a CpuContext for this model's forward passes passes them on. Defaults unless set.
    void set_cpu_tuning(const CpuTuning& tuning) { cpu_tuning_ = tuning; }
    const CpuTuning& cpu_tuning() const { return cpu_tuning_; }
    // Where an n-gram table (qwen4exp's PLE, model/ple_table.h) is read from: the mapping unless
    // told otherwise. Models without one accept any choice. Call after load, before a forward.
    virtual Status place_ple_table(const GgufFile& file, const PleTableOptions& options) { return Status::ok(); }
    // The table with its tier and its lookups so far; null for models without one.
    virtual const PleTable* ple_table() const { return nullptr; }
    // Where forward() runs, for reports: "cpu", or "CUDA NVIDIA H200 (sm_90)".
    virtual std::string device_name() const { return "cpu"; }

    // Runs the batch (positions pos0 .. pos0 + n_tokens - 1, the cache holding every earlier
    // position) and writes logits: n_tokens rows of n_vocab, or one row for the last token.
    virtual void forward(const Batch& batch, KvCache& kv, float* logits, LogitsFor which, CpuContext& ctx) = 0;

    // Hybrid models (qwen3next, qwen35moe) also carry a recurrent state per sequence beside the
    // KV cache; attention-only models return an empty one.
    virtual RecurrentState make_recurrent_state() const { return {}; }
    // forward() with the sequence's recurrent state passed in, so that several sequences can
    // share one hybrid model. (Plain forward() on a hybrid model uses a state the model owns:
    // one sequence at a time, restarted whenever a batch starts at position 0.) Attention-only
    // models ignore `state`.
    virtual void forward_with_state(const Batch& batch, KvCache& kv, RecurrentState& state, float* logits,
                                    LogitsFor which, CpuContext& ctx) {
        (void)state;
        forward(batch, kv, logits, which, ctx);
    }

    // Several sequences in one forward pass: each step's logits equal those forward_with_state
    // gives for it alone. Architectures that fuse (fuses_sequences()) concatenate the steps'
    // tokens, so every weight matrix is read once for all of them and only attention and the
    // recurrent layers run per sequence; the default runs the steps one after the other, which
    // is what a backend or architecture without a fused pass (the GPU model) gets.
    virtual void forward_multi(std::span<const SequenceStep> steps, CpuContext& ctx) {
        std::vector<int32_t> positions;
        for (const SequenceStep& s : steps) {
            positions.resize(static_cast<size_t>(s.n_tokens));
            std::iota(positions.begin(), positions.end(), static_cast<int32_t>(s.pos0));
            const Batch batch{s.tokens, positions.data(), s.n_tokens, s.pos0};
            if (s.state) forward_with_state(batch, *s.kv, *s.state, s.logits, s.which, ctx);
            else forward(batch, *s.kv, s.logits, s.which, ctx);
        }
    }
    // Whether forward_multi reads the weights once for all its steps (for reports and metrics).
    virtual bool fuses_sequences() const { return false; }

    // ---- logits left on the device ---------------------------------------------------------------
    // A model that computes on a GPU can leave LogitsFor::Last rows there (forward with logits ==
    // null, or steps with null logits): the 152k floats of a row then cross to the host only when
    // fetched, and sampling reduces them on the device to a few candidates. A row is there until
    // the model's next forward pass; reading it later is a bug and aborts.
    virtual bool keeps_logits_on_device() const { return false; }
    // Forward passes run so far (each names the rows it leaves).
    uint64_t passes() const { return passes_; }
    virtual void fetch_logits(const DeviceLogitsRow& row, float* out);
    virtual void select_candidates(const DeviceLogitsRow& row, const CandidateQuery& query, CandidateSet& out);

protected:
    ModelConfig config_;
    KvCacheType kv_type_ = KvCacheType::F32;
    CpuTuning cpu_tuning_;
    uint64_t passes_ = 0;  // advanced by the models that keep logits on a device, per pass
};

// Architecture factories (model/arch/*.cpp).
Result<std::unique_ptr<Model>> load_llama_family(const GgufFile& file, const ModelConfig& config);
Result<std::unique_ptr<Model>> load_deepseek2(const GgufFile& file, const ModelConfig& config);
Result<std::unique_ptr<Model>> load_gpt_oss(const GgufFile& file, const ModelConfig& config);
// qwen3next and qwen35moe: hybrid gated DeltaNet / gated attention stacks (model/arch/qwen3next.cpp).
Result<std::unique_ptr<Model>> load_qwen3next(const GgufFile& file, const ModelConfig& config);
// qwen4exp: the hybrid on hyper-connected residual streams, with QSA and PLE (model/arch/qwen4exp.cpp).
Result<std::unique_ptr<Model>> load_qwen4exp(const GgufFile& file, const ModelConfig& config);
// deepseek4: mHC streams, sliding + compressed attention, hash and score routing (model/arch/deepseek4.cpp).
Result<std::unique_ptr<Model>> load_deepseek4(const GgufFile& file, const ModelConfig& config);

}  // namespace strata
