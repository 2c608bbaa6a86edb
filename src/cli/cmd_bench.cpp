// `strata bench -m MODEL.gguf [-p 512] [-n 128] [-r 3]`: prompt processing (pp) and token
// generation (tg) speed in tokens per second, like llama-bench: random token ids, a warm-up run,
// then mean ± standard deviation over the repetitions. `--json` for scripts.
// On the CPU, tg runs also print the memory-bandwidth bound measured in the same run: the pool's
// DRAM read bandwidth divided by the bytes one decoded token reads (weights it uses plus the KV
// cache at the run's mean depth), and the ratio of the measured speed to it. The probe also runs
// before and after each tg repetition, and a second line sets each repetition against the faster
// of those two passes (runtime/decode_bound.h): on a shared machine the bandwidth moves between
// the first probe and the repetitions.
// `--gpu-profile` times every GPU op with events (backend/gpu/op_profiler.h) and prints, per test,
// kernel milliseconds per token by op beside the wall time: the difference is launch and idle gaps.
// `--cpu-profile` does the same for the CPU forward's ops with the host's clock
// (backend/cpu/cpu_op_profile.h): the difference is the forward's own code between them.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <optional>
#include <random>

#include "backend/cpu/cpu_op_profile.h"
#include "backend/gpu/op_profiler.h"
#include "cli/command.h"
#include "cli/engine_flags.h"
#include "gguf/reader.h"
#include "model/model.h"
#include "model/ple_table.h"
#include "model/tensor_roles.h"
#include "core/file.h"
#include "runtime/decode_bound.h"
#include "runtime/grammar_sampling.h"
#include "runtime/json_schema_grammar.h"
#include "cli/bench_speculation.h"
#include "cli/speculation_flags.h"
#include "runtime/memory_bandwidth.h"
#include "runtime/session.h"
#include "runtime/weights_load.h"

namespace strata::cli {
namespace {

// Passes of the bandwidth probe: the best of five before the tests (the bound's column), the best
// of two before and after each tg repetition (the bound beside it), which adds ~0.1 s a
// repetition on a 2-channel machine.
constexpr int kBoundPasses = 5;
constexpr int kBesidePasses = 2;

// "  beside each repetition: bound 41.5-59.1 t/s (probe 14.3-20.4 GB/s), ratio 55.4% 61.2% 66.0%, median 61.2%"
std::string describe_beside(const DecodeBound& b, const std::vector<double>& probes) {
    const auto [bmin, bmax] = std::minmax_element(b.bound_tokens_per_second.begin(), b.bound_tokens_per_second.end());
    const auto [pmin, pmax] = std::minmax_element(probes.begin(), probes.end());
    std::string ratios;
    for (double r : b.ratios) ratios += fmt::format(" {:.1f}%", 100 * r);
    return fmt::format("  beside each repetition: bound {:.2f}-{:.2f} t/s (probe {:.1f}-{:.1f} GB/s before and after), ratio{}, median {:.1f}%",
                       *bmin, *bmax, *pmin / 1e9, *pmax / 1e9, ratios, 100 * b.median_ratio);
}

struct BenchOptions {
    std::string model;
    std::vector<int64_t> n_prompt = {512};
    std::vector<int64_t> n_gen = {128};
    int64_t depth = 0;  // tokens in the KV cache before each test (llama-bench's -d)
    int repetitions = 3;
    int threads = 0;
    int spin_us = ThreadPool::Options{}.spin_us;
    bool spin_backoff = ThreadPool::Options{}.spin_backoff;
    int64_t n_batch = 512;
    bool json = false;
    bool bound = true;
    bool gpu_profile = false;
    bool cpu_profile = false;
    std::string json_schema;  // a JSON Schema file: tg runs again, sampling under its grammar
    SpeculationFlags speculation;  // --draft: each tg test again, greedy text with and without speculation
    double draft_accept = -1.0;    // forced acceptance (cli/bench_speculation.h); < 0: the drafter's own
    std::string draft_prompt;      // the text the speculation test continues; random tokens when empty
    DeviceFlags device;
    TierFlags tiers;
};

// What the expert tiers did during one test, per token: hit rate, lanes, and the host's time split.
nlohmann::ordered_json tier_delta(const GpuExpertTierStats& a, const GpuExpertTierStats& b, double tokens) {
    const double uses = static_cast<double>(b.expert_uses - a.expert_uses);
    auto share = [&](uint64_t x, uint64_t y) { return uses > 0 ? static_cast<double>(y - x) / uses : 0.0; };
    return {{"hit_rate", share(a.hits, b.hits)},
            {"cpu_share", share(a.cpu_experts, b.cpu_experts)},
            {"streamed_share", share(a.streamed_experts, b.streamed_experts)},
            // Uses served by an expert copied ahead (prefetch), and what share of the copies made
            // ahead for a layer that came were used.
            {"ahead_share", share(a.prefetch_hits, b.prefetch_hits)},
            {"ahead_used",
             b.prefetch_offered > a.prefetch_offered
                 ? static_cast<double>(b.prefetch_hits - a.prefetch_hits) / static_cast<double>(b.prefetch_offered - a.prefetch_offered)
                 : 0.0},
            // Experts a CPU lane read into cache ahead of their layer (warming), per token, and
            // the share of those whose layer came that its CPU lane then computed.
            {"warmed_per_token", static_cast<double>(b.warmed_experts - a.warmed_experts) / tokens},
            {"warm_used",
             b.warm_offered > a.warm_offered
                 ? static_cast<double>(b.warm_used - a.warm_used) / static_cast<double>(b.warm_offered - a.warm_offered)
                 : 0.0},
            {"admissions_per_token", static_cast<double>(b.admissions - a.admissions) / tokens},
            {"streamed_mb_per_token", static_cast<double>(b.bytes_streamed - a.bytes_streamed) / tokens / 1e6},
            {"cpu_mb_per_token", static_cast<double>(b.bytes_cpu - a.bytes_cpu) / tokens / 1e6},
            {"ms_wait_gpu_per_token", (b.seconds_wait_gpu - a.seconds_wait_gpu) * 1e3 / tokens},
            {"ms_cpu_experts_per_token", (b.seconds_cpu - a.seconds_cpu) * 1e3 / tokens},
            {"ms_host_plan_per_token", (b.seconds_plan - a.seconds_plan) * 1e3 / tokens},
            {"ms_link_per_token", (b.seconds_link - a.seconds_link) * 1e3 / tokens},
            {"ms_lane_to_routing_per_token", (b.seconds_lane_to_routing - a.seconds_lane_to_routing) * 1e3 / tokens},
            {"ms_routing_to_lane_per_token", (b.seconds_routing_to_lane - a.seconds_routing_to_lane) * 1e3 / tokens},
            {"ms_lane_wake_per_token", (b.seconds_lane_wake - a.seconds_lane_wake) * 1e3 / tokens},
            {"ms_lane_join_per_token", (b.seconds_lane_join - a.seconds_lane_join) * 1e3 / tokens},
            {"decode_cpu_share", b.decode_cpu_share},
            {"cpu_expert_us", b.cpu_expert_us}};
}

// Op times of a test's measured runs (GPU models loaded with profiling on; empty otherwise).
struct OpProfile {
    std::vector<OpProfileRow> rows;
    double wall_seconds = 0;
    int64_t tokens = 0;

    void add(std::vector<OpProfileRow> more, double seconds, int64_t n) {
        for (OpProfileRow& r : more) {
            auto it = std::find_if(rows.begin(), rows.end(), [&](const OpProfileRow& x) { return x.name == r.name; });
            if (it == rows.end()) rows.push_back(std::move(r));
            else it->calls += r.calls, it->ms += r.ms;
        }
        wall_seconds += seconds, tokens += n;
    }
    nlohmann::ordered_json json() const {
        const double per = tokens > 0 ? 1.0 / static_cast<double>(tokens) : 0.0;
        double kernel_ms = 0;
        nlohmann::ordered_json ops = nlohmann::ordered_json::array();
        for (const OpProfileRow& r : rows) {
            kernel_ms += r.ms;
            ops.push_back({{"op", r.name}, {"calls_per_token", static_cast<double>(r.calls) * per}, {"ms_per_token", r.ms * per}});
        }
        return {{"wall_ms_per_token", wall_seconds * 1e3 * per}, {"kernel_ms_per_token", kernel_ms * per}, {"ops", ops}};
    }
    // heading: what was timed and how; sum_label, rest_label: the ops' sum and what is left of the
    // wall time (GPU: launch/idle gaps; CPU: the forward's own code between the timed ops).
    void print(const std::string& test, const char* heading, const char* sum_label, const char* rest_label) const {
        const nlohmann::ordered_json j = json();
        const double wall = j["wall_ms_per_token"].get<double>(), kernels = j["kernel_ms_per_token"].get<double>();
        auto share = [&](double ms) { return wall > 0 ? 100.0 * ms / wall : 0.0; };
        fmt::print("\n{}, {} ({} tokens):\n", heading, test, tokens);
        fmt::print("| {:<28} | {:>11} | {:>9} | {:>6} |\n|:{:-<28}-|-{:->11}:|-{:->9}:|-{:->6}:|\n", "op", "calls/token",
                   "ms/token", "share", "", "", "", "");
        for (const auto& op : j["ops"]) {
            const double ms = op["ms_per_token"].get<double>();
            fmt::print("| {:<28} | {:>11.1f} | {:>9.4f} | {:>5.1f}% |\n", op["op"].get<std::string>(),
                       op["calls_per_token"].get<double>(), ms, share(ms));
        }
        fmt::print("| {:<28} | {:>11} | {:>9.4f} | {:>5.1f}% |\n", sum_label, "", kernels, share(kernels));
        fmt::print("| {:<28} | {:>11} | {:>9.4f} | {:>5.1f}% |\n", rest_label, "", wall - kernels, share(wall - kernels));
        fmt::print("| {:<28} | {:>11} | {:>9.4f} | {:>5.1f}% |\n\n", "wall", "", wall, 100.0);
    }
};

struct Stat {
    double mean = 0, sd = 0;
};
Stat stats(const std::vector<double>& v) {
    Stat s;
    s.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
    for (double x : v) s.sd += (x - s.mean) * (x - s.mean);
    s.sd = v.size() > 1 ? std::sqrt(s.sd / static_cast<double>(v.size() - 1)) : 0.0;
    return s;
}

// Bytes a decode step at the tg test's mean depth reads from the KV cache: every attention
// layer reads keys and values of all positions so far, `per_position` bytes (the cache's own
// size for one position: its element type and attention layers). The bench appends one token,
// then ng more, so step i (0-based) attends over i + 2 positions; the mean is (ng + 3) / 2.
uint64_t kv_bytes_per_token(uint64_t per_position, int64_t n_gen, int64_t depth) {
    const double mean_positions = static_cast<double>(depth) + static_cast<double>(n_gen + 3) / 2.0;
    return static_cast<uint64_t>(static_cast<double>(per_position) * mean_positions);
}

int run_bench(const BenchOptions& o) {
    if (o.gpu_profile) gpu::enable_op_profiling(true);  // before loading: the model reads it once
    if (o.cpu_profile) enable_cpu_op_profiling(true);
    int64_t n_ctx = 1;
    for (int64_t np : o.n_prompt) n_ctx = std::max(n_ctx, o.depth + np);
    for (int64_t ng : o.n_gen) n_ctx = std::max(n_ctx, o.depth + ng + 1);
    auto spec_options = o.speculation.options();
    if (!spec_options) return report_failure("bench", spec_options.status().message());
    const bool speculate = spec_options->mode != DraftMode::None;
    std::string draft_text;
    if (speculate && !o.draft_prompt.empty()) {
        auto text = read_file_to_string(o.draft_prompt);
        if (!text) return report_failure("bench", text.status().message());
        draft_text = *text;
    }
    constexpr int64_t kRandomDraftPrompt = 64;
    if (speculate) {
        for (int64_t ng : o.n_gen) n_ctx = std::max(n_ctx, kRandomDraftPrompt + ng + 1);
    }
    auto request = engine_request(o.model, o.device, o.tiers, n_ctx, o.n_batch);
    if (!request) return report_failure("bench", request.status().message());
    // Random token ids: a file without a vocabulary benchmarks too (a schema or a text needs the vocabulary).
    request->tokenizer = !o.json_schema.empty() || !draft_text.empty();
    auto opened = Engine::open(std::move(*request));
    if (!opened) return report_failure("bench", opened.status().message());
    const GgufFile& file = (*opened)->file;
    const GpuPlacement& placement = (*opened)->placement;
    Model& model = *(*opened)->model;
    const ModelConfig& cfg = model.config();
    ThreadPool pool(
        ThreadPool::Options{.threads = cpu_pool_threads(o.threads, placement), .spin_us = o.spin_us, .spin_backoff = o.spin_backoff});
    std::mt19937 rng(42);
    std::uniform_int_distribution<int32_t> any_token(0, static_cast<int32_t>(cfg.n_vocab) - 1);

    // The CPU profile sums the forward thread's ops against the wall time; on a GPU model the
    // CPU's work is the expert tiers' lane, on its own threads beside the GPU, which the tiers'
    // statistics already time.
    if (o.cpu_profile && model.device_name() != "cpu") {
        return report_failure("bench", "--cpu-profile times CPU runs (--device cpu); on a GPU use --gpu-profile, and the "
                                       "expert tiers' line for the CPU lane");
    }
    // The bound only describes a CPU decode: a GPU reads its weights from its own memory.
    const bool with_bound = o.bound && model.device_name() == "cpu" &&
                            std::any_of(o.n_gen.begin(), o.n_gen.end(), [](int64_t n) { return n > 0; });
    const ModelByteSummary bytes = summarize_model_bytes(file);
    MemoryBandwidth bandwidth;
    std::optional<ReadBandwidthProbe> probe;
    if (with_bound) {
        probe.emplace(pool);
        bandwidth = probe->measure(kBoundPasses);
    }

    nlohmann::ordered_json results = nlohmann::ordered_json::array();
    if (!o.json) {
        fmt::print("model {} ({}), {} threads, on {}\n", o.model, cfg.arch_name(), pool.size(), model.device_name());
        if (placement.worth_describing()) fmt::print("{}\n", placement.describe());
        if (with_bound) {
            fmt::print("DRAM read bandwidth {:.1f} GB/s ({} threads, best of {} passes over {} MiB, {}); weights read per token {:.1f} MB\n",
                       bandwidth.bytes_per_second / 1e9, bandwidth.threads, bandwidth.passes, bandwidth.buffer_bytes >> 20,
                       bandwidth.prefetch_bytes ? fmt::format("prefetch {} KiB ahead", bandwidth.prefetch_bytes >> 10) : "no prefetch",
                       static_cast<double>(bytes.bytes_per_token) / 1e6);
        }
        fmt::print("| {:>13} | {:>20} | {:>10} | {:>6} |\n|--------------:|---------------------:|-----------:|-------:|\n", "test", "t/s",
                   "bound t/s", "ratio");
    }
    // bound_tok_s = 0: no bound for this test (prompt processing, or no bandwidth measured).
    // The tiers' counters over the timed windows only (not the warm-up, the depth fill, the first token).
    GpuExpertTierStats tiers_window, window_start;
    // The same for qwen4exp's n-gram table (model/ple_table.h): rows looked up, the disk's reads.
    const PleTable* ple = model.ple_table();
    PleTableStats ple_window, ple_start;
    auto ple_snapshot = [&] { return ple ? ple->stats() : PleTableStats{}; };
    auto add_ple_window = [&] {
        const PleTableStats now = ple_snapshot();
        ple_window.rows += now.rows - ple_start.rows;
        ple_window.disk_reads += now.disk_reads - ple_start.disk_reads;
        ple_window.disk_bytes += now.disk_bytes - ple_start.disk_bytes;
    };
    auto tier_snapshot = [&] {
        if (!placement.stats) return GpuExpertTierStats{};
        std::lock_guard lock(*placement.stats_mutex);
        return *placement.stats;
    };
    auto report = [&](const std::string& name, const std::vector<double>& rates, uint64_t bytes_per_token,
                      const OpProfile& profile, const OpProfile& cpu_profile, const std::vector<double>& probes_beside = {}) {
        Stat s = stats(rates);
        nlohmann::ordered_json tiers, ngram;
        if (ple != nullptr) {
            const double tokens = static_cast<double>(std::stoll(name.substr(2))) * static_cast<double>(rates.size());
            ngram = {{"tier", ple_table_tier_name(ple->tier())},
                     {"direct_io", ple->direct_io()},
                     {"rows_per_token", static_cast<double>(ple_window.rows) / tokens},
                     {"disk_reads_per_token", static_cast<double>(ple_window.disk_reads) / tokens},
                     {"disk_bytes_per_token", static_cast<double>(ple_window.disk_bytes) / tokens}};
        }
        if (placement.stats) {
            const int64_t per_run = std::stoll(name.substr(2));
            tiers = tier_delta(GpuExpertTierStats{}, tiers_window, static_cast<double>(per_run) * static_cast<double>(rates.size()));
        }
        const double bound = bytes_per_token > 0 ? bandwidth.bytes_per_second / static_cast<double>(bytes_per_token) : 0.0;
        std::optional<DecodeBound> beside;
        if (bound > 0 && !probes_beside.empty()) {
            Result<DecodeBound> b = decode_bound_beside(rates, probes_beside, bytes_per_token);
            if (b) beside = *std::move(b);
        }
        if (o.json) {
            nlohmann::ordered_json r{{"test", name},       {"depth", o.depth},   {"tokens_per_second", s.mean},
                                     {"stddev", s.sd},     {"samples", rates}};
            if (!tiers.is_null()) r["tiers"] = tiers;
            if (!ngram.is_null()) r["ngram_table"] = ngram;
            if (!profile.rows.empty()) r["gpu_profile"] = profile.json();
            if (!cpu_profile.rows.empty()) r["cpu_profile"] = cpu_profile.json();
            if (bound > 0) {
                r["bytes_per_token"] = bytes_per_token;
                r["bound_tokens_per_second"] = bound;
                r["ratio_to_bound"] = s.mean / bound;
            }
            if (beside) {
                r["beside"] = {{"probe_bytes_per_second", probes_beside},
                               {"bound_tokens_per_second", beside->bound_tokens_per_second},
                               {"ratio_to_bound", beside->ratios},
                               {"median_ratio", beside->median_ratio}};
            }
            results.push_back(r);
        } else if (bound > 0) {
            fmt::print("| {:>13} | {:>11.2f} ± {:>6.2f} | {:>10.2f} | {:>5.1f}% |\n", name, s.mean, s.sd, bound, 100.0 * s.mean / bound);
            if (beside) fmt::print("{}\n", describe_beside(*beside, probes_beside));
        } else {
            fmt::print("| {:>13} | {:>11.2f} ± {:>6.2f} | {:>10} | {:>6} |\n", name, s.mean, s.sd, "", "");
        }
        if (!o.json && !tiers.is_null()) {
            // Experts copied ahead (prefetch) are a part of the streamed ones; named when there were any.
            const double ahead = tiers["ahead_share"].get<double>();
            const std::string ahead_note =
                ahead > 0 ? fmt::format(" (copied ahead {:.1f}%; {:.0f}% of the copies made ahead used)", 100 * ahead,
                                        100 * tiers["ahead_used"].get<double>())
                          : "";
            const double warmed = tiers["warmed_per_token"].get<double>();
            const std::string warm_note =
                warmed > 0 ? fmt::format(", {:.1f} read into cache ahead ({:.0f}% of those then computed by the CPU)", warmed,
                                         100 * tiers["warm_used"].get<double>())
                           : "";
            fmt::print("|               | experts: hit {:.1f}%, CPU {:.1f}%{}, streamed {:.1f}%{}; per token: GPU wait {:.2f} ms, "
                       "CPU experts {:.2f} ms, host {:.2f} ms, link {:.2f} ms ({:.1f} MB streamed) |\n",
                       100 * tiers["hit_rate"].get<double>(), 100 * tiers["cpu_share"].get<double>(), warm_note,
                       100 * tiers["streamed_share"].get<double>(), ahead_note, tiers["ms_wait_gpu_per_token"].get<double>(),
                       tiers["ms_cpu_experts_per_token"].get<double>(), tiers["ms_host_plan_per_token"].get<double>(),
                       tiers["ms_link_per_token"].get<double>(), tiers["streamed_mb_per_token"].get<double>());
        }
        if (!o.json && !ngram.is_null()) {
            fmt::print("|               | n-gram table ({}{}): {:.1f} rows a token, {:.1f} KB a token from the disk |\n",
                       ngram["tier"].get<std::string>(), ple->tier() == PleTableTier::Ssd && ple->direct_io() ? ", O_DIRECT" : "",
                       ngram["rows_per_token"].get<double>(), ngram["disk_bytes_per_token"].get<double>() / 1e3);
        }
        if (!o.json && !tiers.is_null() && tiers["ms_lane_to_routing_per_token"].get<double>() > 0) {
            fmt::print("|               | between CPU lanes, per token: lane end → next routing {:.2f} ms, routing → lane "
                       "start {:.2f} ms (awaiting the last lane {:.2f} ms), start → first instruction {:.2f} ms |\n",
                       tiers["ms_lane_to_routing_per_token"].get<double>(), tiers["ms_routing_to_lane_per_token"].get<double>(),
                       tiers["ms_lane_join_per_token"].get<double>(), tiers["ms_lane_wake_per_token"].get<double>());
        }
        if (!o.json && !profile.rows.empty())
            profile.print(name, "GPU op profile (each op bracketed by events, launched eagerly)", "kernels (sum)",
                          "launch/idle gaps");
        if (!o.json && !cpu_profile.rows.empty())
            cpu_profile.print(name, "CPU op profile (the forward thread's ops, host clock)", "ops (sum)", "between the ops");
    };

    // llama-bench's names: "pp512", "tg128 @ d8192".
    auto test_name = [&](const char* kind, int64_t n) {
        return o.depth > 0 ? fmt::format("{}{} @ d{}", kind, n, o.depth) : fmt::format("{}{}", kind, n);
    };
    // Random tokens up to the test's depth, in the session's prompt chunks.
    auto fill_depth = [&](Session& session) -> Status {
        if (o.depth == 0) return Status::ok();
        std::vector<int32_t> tokens(static_cast<size_t>(o.depth));
        for (auto& t : tokens) t = any_token(rng);
        return session.append(tokens);
    };
    for (int64_t np : o.n_prompt) {
        if (np <= 0) continue;
        std::vector<double> rates;
        OpProfile profile, cpu_profile;
        tiers_window = GpuExpertTierStats{};
        ple_window = PleTableStats{};
        for (int r = -1; r < o.repetitions; ++r) {  // r = -1: warm-up, not counted
            Session session(model, SessionOptions{.n_ctx = o.depth + np, .n_batch = o.n_batch, .logits_on_device = true}, pool);
            if (Status s = fill_depth(session); !s) return report_failure("bench", s.message());
            std::vector<int32_t> tokens(static_cast<size_t>(np));
            for (auto& t : tokens) t = any_token(rng);
            static_cast<void>(gpu::op_profile_totals().take());
            static_cast<void>(cpu_op_profile_totals().take());
            window_start = tier_snapshot();
            ple_start = ple_snapshot();
            auto t0 = std::chrono::steady_clock::now();
            if (Status s = session.append(tokens); !s) return report_failure("bench", s.message());
            double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            if (r >= 0) tiers_window.add_window(window_start, tier_snapshot());
            if (r >= 0) add_ple_window();
            if (r >= 0) rates.push_back(static_cast<double>(np) / secs);
            if (r >= 0) profile.add(gpu::op_profile_totals().take(), secs, np);
            if (r >= 0) cpu_profile.add(cpu_op_profile_totals().take(), secs, np);
        }
        report(test_name("pp", np), rates, 0, profile, cpu_profile);
    }
    Sampler greedy(SamplingParams{.temperature = 0.0f});
    // --json-schema: each tg test runs a second time with the schema's grammar masking every
    // sampled token (the chosen token is fed, and the grammar restarts when its value closes).
    std::shared_ptr<const Grammar> schema_grammar;
    std::shared_ptr<const TokenVocabulary> schema_vocab;
    if (!o.json_schema.empty()) {
        auto text = read_file_to_string(o.json_schema);
        if (!text) return report_failure("bench", text.status().message());
        auto schema = nlohmann::ordered_json::parse(*text, nullptr, false);
        if (schema.is_discarded()) return report_failure("bench", fmt::format("--json-schema {}: expected a JSON Schema, got text that is not JSON — check the file", o.json_schema));
        auto gbnf = json_schema_to_gbnf(schema, {.strict = true});
        if (!gbnf) return report_failure("bench", gbnf.status().message());
        auto grammar = parse_grammar(*gbnf);
        if (!grammar) return report_failure("bench", grammar.status().message());
        schema_grammar = std::make_shared<const Grammar>(std::move(*grammar));
        schema_vocab = std::make_shared<const TokenVocabulary>(TokenVocabulary::from(*(*opened)->tokenizer));
    }
    for (int64_t ng : o.n_gen) {
      for (const bool constrained : {false, true}) {
        if (ng <= 0) continue;
        if (constrained && !schema_grammar) continue;
        int64_t fallbacks = 0;
        std::vector<double> rates, probes_beside;
        OpProfile profile, cpu_profile;
        tiers_window = GpuExpertTierStats{};
        ple_window = PleTableStats{};
        for (int r = -1; r < o.repetitions; ++r) {
            Session session(model, SessionOptions{.n_ctx = o.depth + ng + 1, .n_batch = o.n_batch, .logits_on_device = true}, pool);
            if (Status s = fill_depth(session); !s) return report_failure("bench", s.message());
            int32_t first[1] = {any_token(rng)};
            if (Status s = session.append(first); !s) return report_failure("bench", s.message());
            // The probe right before the timed tokens (the pass after them is the next one's, or
            // the last below).
            if (probe && r >= 0) probes_beside.push_back(probe->measure(kBesidePasses).bytes_per_second);
            static_cast<void>(gpu::op_profile_totals().take());  // the first token's pass is not measured
            static_cast<void>(cpu_op_profile_totals().take());
            window_start = tier_snapshot();
            ple_start = ple_snapshot();
            auto t0 = std::chrono::steady_clock::now();
            std::optional<GrammarConstraint> grammar;
            if (constrained) grammar.emplace(schema_grammar, schema_vocab);
            for (int64_t i = 0; i < ng; ++i) {
                // Each step picks a token greedily as generation does (on the GPU for a GPU model),
                // and then feeds a random one, so that the routing stays that of random text.
                int32_t next[1] = {0};
                if (grammar) {
                    const int32_t t = session.sample(greedy, *grammar);
                    const bool ends = t < 0 || schema_vocab->is_end(t) || !grammar->accept(t) || grammar->exhausted();
                    next[0] = t < 0 || schema_vocab->is_end(t) ? any_token(rng) : t;
                    if (ends) {
                        fallbacks += grammar->fallbacks;
                        grammar.emplace(schema_grammar, schema_vocab);
                    }
                } else {
                    static_cast<void>(session.sample(greedy));
                    next[0] = any_token(rng);
                }
                if (Status s = session.append(next); !s) return report_failure("bench", s.message());
            }
            if (grammar) fallbacks += grammar->fallbacks;
            double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            if (r >= 0) tiers_window.add_window(window_start, tier_snapshot());
            if (r >= 0) add_ple_window();
            if (r >= 0) rates.push_back(static_cast<double>(ng) / secs);
            if (r >= 0) profile.add(gpu::op_profile_totals().take(), secs, ng);
            if (r >= 0) cpu_profile.add(cpu_op_profile_totals().take(), secs, ng);
        }
        if (probe) probes_beside.push_back(probe->measure(kBesidePasses).bytes_per_second);
        // The bound is a CPU one (with_bound), so a one-position cache is a host cache.
        const uint64_t kv_read = with_bound ? kv_bytes_per_token(model.make_kv_cache(1).bytes(), ng, o.depth) : 0;
        const std::string name = test_name("tg", ng) + (constrained ? "+schema" : "");
        report(name, rates, with_bound ? bytes.bytes_per_token + kv_read : 0, profile, cpu_profile, probes_beside);
        if (constrained && !o.json) {
            fmt::print("{}: {} full-vocabulary walks in {} tokens (none of the reduction's candidates allowed)\n", name, fallbacks,
                       ng * (o.repetitions + 1));
        }
      }
    }
    if (speculate) {
        std::vector<int32_t> prompt;
        if (!draft_text.empty()) {
            const Tokenizer& tok = *(*opened)->tokenizer;
            prompt = tok.encode(draft_text, tok.wants_bos(), /*parse_special=*/false);
        } else {
            prompt.resize(kRandomDraftPrompt);
            for (auto& t : prompt) t = any_token(rng);
        }
        for (int64_t ng : o.n_gen) {
            if (ng <= 0) continue;
            auto r = bench_speculation(model, pool, SpeculationBenchOptions{.prompt = prompt, .n_gen = ng, .repetitions = o.repetitions,
                                                                            .n_batch = o.n_batch, .speculation = *spec_options,
                                                                            .forced_acceptance = o.draft_accept});
            if (!r) return report_failure("bench", r.status().message());
            const std::string name = fmt::format("tg{}+draft", ng);
            if (o.json) {
                results.push_back({{"test", name}, {"prompt_tokens", prompt.size()}, {"draft", o.speculation.mode},
                                   {"draft_max", spec_options->k_max}, {"forced_acceptance", o.draft_accept}, {"speculation", r->json()}});
            } else {
                fmt::print("{}\n", r->describe(fmt::format("{} ({}, k <= {}{}, {}-token prompt)", name, o.speculation.mode, spec_options->k_max,
                                                          o.draft_accept >= 0 ? fmt::format(", forced acceptance {:.0f}%", 100 * o.draft_accept) : "",
                                                          prompt.size())));
            }
        }
    }
    if (o.json) {
        nlohmann::ordered_json out{{"model", o.model}, {"arch", cfg.arch_name()}, {"threads", pool.size()}, {"spin_us", pool.spin_us()},
                                   {"backend", model.device_name()}};
        if (with_bound) {
            out["memory_bandwidth"] = {{"bytes_per_second", bandwidth.bytes_per_second}, {"threads", bandwidth.threads},
                                       {"buffer_bytes", bandwidth.buffer_bytes}, {"passes", bandwidth.passes},
                                       {"prefetch_bytes", bandwidth.prefetch_bytes}};
            out["weight_bytes_per_token"] = bytes.bytes_per_token;
        }
        out["results"] = results;
        fmt::print("{}\n", out.dump(2));
    }
    return 0;
}

CommandRegistration registration("bench", "Measure prompt and generation speed (tokens per second)", [](CLI::App& app) {
    auto o = std::make_shared<BenchOptions>();
    app.add_option("-m,--model", o->model, "GGUF model")->required();
    // Lists as llama-bench takes them: -p 512,4096 (or -p 512 -p 4096).
    app.add_option("-p,--n-prompt", o->n_prompt, "Prompt lengths to test, comma-separated (0: skip)")
        ->delimiter(',')
        ->capture_default_str();
    app.add_option("-n,--n-gen", o->n_gen, "Generation lengths to test, comma-separated (0: skip)")
        ->delimiter(',')
        ->capture_default_str();
    app.add_option("-d,--n-depth", o->depth, "Tokens already in the KV cache before each test (not timed)")
        ->capture_default_str()
        ->check(CLI::Range(int64_t{0}, int64_t{1} << 24));
    app.add_option("-r,--repetitions", o->repetitions, "Measured runs per test")->capture_default_str()->check(CLI::Range(1, 1000));
    add_threads_option(app, o->threads);
    app.add_flag("--spin-backoff", o->spin_backoff,
                 "Pool threads stop polling for a while after 8 polls in a row ran out (for A/B on machines with busy cores)");
    app.add_option("--spin-us", o->spin_us,
                   "Microseconds pool threads poll before sleeping (0: sleep at once; -1: 500 with 8+ hardware "
                   "threads, else 0)")
        ->capture_default_str();
    app.add_option("-b,--batch-size", o->n_batch, "Prompt tokens per forward pass")->capture_default_str()->check(CLI::Range(1, 1 << 16));
    app.add_flag("--json", o->json, "Machine-readable output");
    app.add_option("--json-schema", o->json_schema,
                   "A JSON Schema file: each tg test runs again sampling under its grammar (tgN+schema), for the constrained decoding's cost");
    app.add_flag("!--no-bound", o->bound, "Skip the memory-bandwidth measurement and the decode bound");
    app.add_flag("--gpu-profile", o->gpu_profile,
                 "Time every GPU op (eager launches) and print kernel ms per token by op (as STRATA_GPU_PROFILE=1)");
    app.add_flag("--cpu-profile", o->cpu_profile,
                 "Time the CPU forward's ops (host clock) and print ms per token by op (as STRATA_CPU_PROFILE=1)");
    o->speculation.mode = "none";  // bench measures speculation only when asked
    o->speculation.add_to(app);
    app.add_option("--draft-accept", o->draft_accept,
                   "With --draft: drafts that are the plain run's own tokens, each right with this probability (0 to 1), "
                   "for models whose weights predict nothing (synthetic ones)")
        ->check(CLI::Range(0.0, 1.0));
    app.add_option("--draft-prompt", o->draft_prompt, "With --draft: a text file the generation continues (default: 64 random tokens)");
    o->device.add_to(app);
    o->tiers.add_to(app);
    return [o] { return run_bench(*o); };
});

}  // namespace
}  // namespace strata::cli
