#include "cli/bench_speculation.h"

#include <fmt/format.h>

#include <chrono>
#include <numeric>

#include "runtime/session.h"

namespace strata::cli {
namespace {

// The plain run's continuation, each position's token kept with probability `rate` and otherwise
// replaced by another: the same choice every time a position is drafted.
class ForcedDrafter : public Drafter {
public:
    ForcedDrafter(std::vector<int32_t> expected, size_t prompt_size, double rate, int64_t n_vocab)
        : expected_(std::move(expected)), prompt_size_(prompt_size), rate_(rate), n_vocab_(n_vocab) {}
    std::string_view name() const override { return "forced"; }
    void draft(std::span<const int32_t> context, int64_t max, std::vector<int32_t>& out) override {
        out.clear();
        for (size_t p = context.size() - prompt_size_; p < expected_.size() && static_cast<int64_t>(out.size()) < max; ++p) {
            const int32_t t = expected_[p];
            out.push_back(right(p) ? t : static_cast<int32_t>((t + 1) % n_vocab_));
        }
    }

private:
    bool right(size_t position) const {
        uint64_t x = position * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;  // splitmix64's finalizer
        x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
        x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
        x ^= x >> 31;
        return static_cast<double>(x >> 11) * 0x1.0p-53 < rate_;
    }
    std::vector<int32_t> expected_;
    size_t prompt_size_;
    double rate_;
    int64_t n_vocab_;
};

struct Timed {
    std::vector<int32_t> tokens;
    double seconds = 0.0;
};

Result<Timed> generate_greedy(Model& model, ThreadPool& pool, const SpeculationBenchOptions& o, Speculation* speculation) {
    const int64_t n_ctx = static_cast<int64_t>(o.prompt.size()) + o.n_gen + 1;
    Session session(model, SessionOptions{.n_ctx = n_ctx, .n_batch = o.n_batch, .logits_on_device = true}, pool);
    STRATA_TRY(session.append(o.prompt));
    Sampler greedy(SamplingParams{.temperature = 0.0f});
    for (int32_t t : o.prompt) greedy.accept(t);
    Timed out;
    out.tokens.reserve(static_cast<size_t>(o.n_gen));
    const auto t0 = std::chrono::steady_clock::now();
    auto full = decode_tokens(session, greedy, speculation, o.n_gen, [&](int32_t t) {
        out.tokens.push_back(t);
        return TokenVerdict::Continue;
    });
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!full) return full.status();
    return out;
}

double mean(const std::vector<double>& v) { return v.empty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size()); }

}  // namespace

Result<SpeculationBenchResult> bench_speculation(Model& model, ThreadPool& pool, const SpeculationBenchOptions& o) {
    if (o.prompt.empty()) return Status::error("the speculation bench needs a prompt");
    if (o.forced_acceptance > 1.0) return Status::error("--draft-accept: expected a rate from 0 to 1, got {}", o.forced_acceptance);
    SpeculationBenchResult result;
    for (int r = -1; r < o.repetitions; ++r) {  // r = -1: warm-up, not counted
        STRATA_ASSIGN_OR_RETURN(Timed plain, generate_greedy(model, pool, o, nullptr));
        std::unique_ptr<Drafter> forced;
        if (o.forced_acceptance >= 0.0) {
            forced = std::make_unique<ForcedDrafter>(plain.tokens, o.prompt.size(), o.forced_acceptance, model.config().n_vocab);
        }
        Speculation speculation = forced ? Speculation(o.speculation, std::move(forced)) : Speculation(o.speculation);
        STRATA_ASSIGN_OR_RETURN(Timed spec, generate_greedy(model, pool, o, &speculation));
        if (r < 0) continue;
        result.plain_rates.push_back(static_cast<double>(plain.tokens.size()) / plain.seconds);
        result.speculative_rates.push_back(static_cast<double>(spec.tokens.size()) / spec.seconds);
        result.stats.add(speculation.stats());
        result.differing_runs += spec.tokens != plain.tokens;
        result.final_draft_length = speculation.length().best();
        result.pass_seconds.clear();
        for (int64_t n = 1; n <= o.speculation.k_max + 1; ++n) result.pass_seconds.push_back(speculation.length().pass_seconds(n));
    }
    return result;
}

nlohmann::ordered_json SpeculationBenchResult::json() const {
    return {{"plain_tokens_per_second", mean(plain_rates)},
            {"speculative_tokens_per_second", mean(speculative_rates)},
            {"speedup", mean(plain_rates) > 0 ? mean(speculative_rates) / mean(plain_rates) : 0.0},
            {"plain_samples", plain_rates},
            {"speculative_samples", speculative_rates},
            {"verification_passes", stats.passes},
            {"plain_steps", stats.plain_steps},
            {"drafted", stats.drafted},
            {"accepted", stats.accepted},
            {"acceptance", stats.acceptance()},
            {"tokens_per_pass", stats.tokens_per_pass()},
            {"final_draft_length", final_draft_length},
            {"pass_seconds", pass_seconds},
            {"runs_with_other_tokens", differing_runs}};
}

std::string SpeculationBenchResult::describe(const std::string& name) const {
    const double plain = mean(plain_rates), spec = mean(speculative_rates);
    std::string costs;
    for (size_t i = 1; i < pass_seconds.size() && pass_seconds[0] > 0; ++i) {
        costs += fmt::format("{}{} tokens {:.2f}x", costs.empty() ? "" : ", ", i + 1, pass_seconds[i] / pass_seconds[0]);
    }
    return fmt::format("{}: {:.2f} t/s speculative vs {:.2f} t/s plain ({:.2f}x); acceptance {:.1f}% ({} of {} drafts), "
                       "{:.2f} tokens per verification pass, {} passes and {} plain steps, draft length now {}; a pass of {}{}; {}",
                       name, spec, plain, plain > 0 ? spec / plain : 0.0, 100.0 * stats.acceptance(), stats.accepted, stats.drafted,
                       stats.tokens_per_pass(), stats.passes, stats.plain_steps, final_draft_length,
                       costs.empty() ? "n tokens: not measured" : costs, costs.empty() ? "" : " a decode step (estimated where not measured)",
                       differing_runs == 0 ? "the same tokens as plain decoding"
                                           : fmt::format("TOKENS DIFFER from plain decoding in {} runs", differing_runs));
}

}  // namespace strata::cli
