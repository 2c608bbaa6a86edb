#pragma once
// A model that keeps its last pass's LogitsFor::Last rows to itself, as a GPU model keeps them in
// VRAM (Model::keeps_logits_on_device), so that the CPU tests of sessions and of the server's
// scheduler run the paths of logits left on a device. The rows are the inner model's; reading a
// row of an earlier pass aborts, as the GPU model's does.
//
//   DeviceRowsModel device(*cpu_model);
//   Session s(device, SessionOptions{.logits_on_device = true}, pool);

#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

#include "core/check.h"
#include "model/model.h"
#include "runtime/select_candidates.h"

namespace strata::test {

class DeviceRowsModel final : public Model {
public:
    explicit DeviceRowsModel(Model& inner) : inner_(inner) { config_ = inner.config(); }
    KvCache make_kv_cache(int64_t n_ctx) const override { return inner_.make_kv_cache(n_ctx); }
    RecurrentState make_recurrent_state() const override { return inner_.make_recurrent_state(); }
    void forward(const Batch& batch, KvCache& kv, float* logits, LogitsFor which, CpuContext& ctx) override {
        inner_.forward(batch, kv, logits ? logits : begin_pass(1), which, ctx);
    }
    void forward_with_state(const Batch& batch, KvCache& kv, RecurrentState& state, float* logits, LogitsFor which,
                            CpuContext& ctx) override {
        inner_.forward_with_state(batch, kv, state, logits ? logits : begin_pass(1), which, ctx);
    }
    void forward_multi(std::span<const SequenceStep> steps, CpuContext& ctx) override {
        std::vector<SequenceStep> own(steps.begin(), steps.end());
        float* rows = begin_pass(own.size());
        for (size_t i = 0; i < own.size(); ++i) {
            if (!own[i].logits) own[i].logits = rows + i * static_cast<size_t>(config_.n_vocab);
        }
        inner_.forward_multi(own, ctx);
    }
    bool fuses_sequences() const override { return inner_.fuses_sequences(); }

    bool keeps_logits_on_device() const override { return true; }
    void fetch_logits(const DeviceLogitsRow& row, float* out) override {
        std::copy_n(row_of(row), config_.n_vocab, out);
    }
    void select_candidates(const DeviceLogitsRow& row, const CandidateQuery& query, CandidateSet& out) override {
        strata::select_candidates(row_of(row), config_.n_vocab, query, out, scratch_);
    }

private:
    // A new pass of `rows` rows (each pass's rows replace the last's), filled with NaN until written.
    float* begin_pass(size_t rows) {
        ++passes_;
        n_rows_ = static_cast<int64_t>(rows);
        rows_.assign(rows * static_cast<size_t>(config_.n_vocab), NAN);
        return rows_.data();
    }
    const float* row_of(const DeviceLogitsRow& row) const {
        STRATA_CHECK(row.pass == passes_ && row.row >= 0 && row.row < n_rows_, "a device row of an earlier pass");
        return rows_.data() + row.row * config_.n_vocab;
    }

    Model& inner_;
    std::vector<float> rows_;
    int64_t n_rows_ = 0;
    std::vector<float> scratch_;
};

}  // namespace strata::test
