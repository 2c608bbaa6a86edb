// `strata parity MODEL.gguf REF.gguf [--backend cpu|gpu] [--mode batch|decode|both] [--json]`:
// the engine's logits against a reference (HF transformers) file — normalized MSE
// Σ(got-ref)²/Σref², largest difference and arg-max agreement, per mode: `batch` feeds the prompt
// as one batch, `decode` one token at a time through the KV cache. Exits non-zero when a mode's
// NMSE exceeds --max-nmse (default 1e-4) or top-1 agreement falls under 90%. With --backend gpu on
// a machine without a usable GPU it says it skipped and exits 0.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/engine_flags.h"
#include "model/parity.h"
#include "runtime/weights_load.h"

namespace strata::cli {
namespace {

struct ParityOptions {
    std::string model, ref, backend, mode = "both";
    int64_t chunk = -1;  // -1: from --mode
    int threads = 0;
    double max_nmse = 1e-4;
    double min_top1 = 0.9;
    int64_t max_outliers = 2;  // positions allowed over the limit (model/parity.h: routing near-ties)
    bool json = false;
    DeviceFlags device;
    TierFlags tiers;
};

int run_parity_command(ParityOptions o) {
    if (!o.backend.empty()) o.device.device = o.backend;  // --backend is --device's name in this command
    // Placed as `run` would place it with a 4096-token context.
    auto request = engine_request(o.model, o.device, o.tiers, 4096, 512);
    if (!request) return report_failure("parity", request.status().message());
    if (request->compute.device == ComputeDevice::Gpu) {
        if (std::string why = gpu_unavailable_reason(); !why.empty()) {
            fmt::print("parity: skipped, no GPU to run on ({})\n", why);
            return 0;
        }
    }
    std::vector<std::pair<std::string, int64_t>> modes;
    if (o.chunk >= 0) {
        modes.emplace_back(o.chunk == 0 ? "batch" : fmt::format("chunk {}", o.chunk), o.chunk);
    } else if (o.mode == "batch" || o.mode == "decode" || o.mode == "both") {
        if (o.mode != "decode") modes.emplace_back("batch", 0);
        if (o.mode != "batch") modes.emplace_back("decode", 1);
    } else {
        return report_failure("parity", fmt::format("--mode: expected batch, decode or both, got \"{}\"", o.mode));
    }

    ThreadPool pool(ThreadPool::Options{.threads = o.threads});
    nlohmann::ordered_json results = nlohmann::ordered_json::array();
    bool all_ok = true;
    std::string device_name;
    for (const auto& [name, chunk] : modes) {
        GpuPlacement placement;
        auto r = run_parity(o.model, o.ref, chunk, pool, [&](const GgufFile& f) {
            return place_and_load(f, request->compute, request->placement, &placement);
        }, gguf_load_for(request->compute, o.model));
        if (!r) return report_failure("parity", r.status().message());
        if (placement.tiered && !o.json) {
            std::lock_guard lock(*placement.stats_mutex);
            const GpuExpertTierStats& st = *placement.stats;
            fmt::print("  {:<8} {}; expert uses {}: {} hits, {} on the CPU, {} streamed\n", name, placement.describe(),
                       st.expert_uses, st.hits, st.cpu_experts, st.streamed_experts);
        }
        const ParityVerdict verdict = judge_parity(*r, o.max_nmse, o.min_top1, o.max_outliers);
        const bool ok = verdict.pass;
        all_ok = all_ok && ok;
        device_name = r->device;
        if (o.json) {
            results.push_back({{"mode", name}, {"nmse", r->nmse}, {"max_abs_diff", r->max_abs_diff},
                               {"top1_agree", r->top1_agree}, {"n_tokens", r->n_tokens}, {"outliers", verdict.outliers},
                               {"nmse_without_outliers", verdict.nmse_without_outliers}, {"pass", ok}});
        } else {
            if (&name == &modes.front().first) {
                fmt::print("{}: {} tokens, vocabulary {}, on {}\n", o.model, r->n_tokens, r->n_vocab, r->device);
            }
            fmt::print("  {:<8} nmse {:.3e} (limit {:.1e})  max |diff| {:.3e}  top-1 {}/{}  {}\n", name, r->nmse,
                       o.max_nmse, r->max_abs_diff, r->top1_agree, r->n_tokens, ok ? "PASS" : "FAIL");
            if (!verdict.outliers.empty()) {
                std::string which;
                for (int64_t t : verdict.outliers) {
                    which += fmt::format("{}{} ({:.1e})", which.empty() ? "" : ", ", t, r->token_nmse[static_cast<size_t>(t)]);
                }
                fmt::print("           over the limit at position(s) {}; the other positions: nmse {:.3e}, every arg-max "
                           "agrees (a MoE routing near-tie flipped by rounding: see --max-outlier-tokens)\n",
                           which, verdict.nmse_without_outliers);
            }
        }
    }
    if (o.json) {
        nlohmann::ordered_json out{{"model", o.model}, {"reference", o.ref}, {"device", device_name},
                                   {"max_nmse", o.max_nmse}, {"modes", results}, {"pass", all_ok}};
        fmt::print("{}\n", out.dump(2));
    }
    return all_ok ? 0 : 1;
}

CommandRegistration registration("parity", "Compare the engine's logits with a reference logits file",
                                 [](CLI::App& app) {
                                     auto o = std::make_shared<ParityOptions>();
                                     app.add_option("model,-m,--model", o->model, "GGUF model")->required();
                                     app.add_option("ref,--ref", o->ref, "Reference file (tokens + logits)")->required();
                                     app.add_option("--backend", o->backend, "cpu or gpu (same as --device)");
                                     app.add_option("--mode", o->mode, "batch, decode or both")->capture_default_str();
                                     app.add_option("--chunk", o->chunk, "Tokens per step instead of --mode (0: one batch)");
                                     app.add_option("-t,--threads", o->threads, "CPU threads (0: all)");
                                     app.add_option("--max-nmse", o->max_nmse, "Pass threshold")->capture_default_str();
                                     app.add_option("--max-outlier-tokens", o->max_outliers,
                                                    "Positions allowed far (10x) over --max-nmse when every arg-max agrees "
                                                    "and the rest is within it (MoE routing near-ties)")
                                         ->capture_default_str();
                                     app.add_option("--min-top1", o->min_top1, "Least share of positions whose arg-max agrees")
                                         ->capture_default_str();
                                     app.add_flag("--json", o->json, "Machine-readable output");
                                     o->device.add_to(app);
                                     o->tiers.add_to(app);
                                     return [o] { return run_parity_command(*o); };
                                 });

}  // namespace
}  // namespace strata::cli
