#pragma once
// The expert tiers' switches between a measured path and its alternative, kept so that one binary
// can compare the two (A/B rounds on the device). Every default is the path the committed
// benchmarks chose; the result folder that chose it is named beside each field. The tiers read
// these from GpuExpertTierOptions::tuning and nowhere else; the command line fills them from the
// STRATA_TIERS_* variables in one place (cli/environment.h).
//
//   GpuExpertTierOptions o;  o.tuning.early_combine = false;   // the host waits for the CPU lane

#include <cstdint>
#include <optional>

namespace strata {

// What the CPU lane reads ahead after its sum (experts/cache_warmer.h).
enum class CacheWarming {
    Off,     // nothing
    Shared,  // read and moved to the shared cache, where the next step's lane finds it
    Read,    // read and left where it was read
};

struct TierTuning {
    // The GPU waits on a counter for the CPU lane before the combine, instead of the host waiting
    // and then queueing it (bench/results/2026-11-30-early-combine). STRATA_TIERS_EARLY_COMBINE=0.
    bool early_combine = true;
    // bench/results/2026-11-30-cache-warming. STRATA_TIERS_WARM=0 (Off) or =read (Read).
    CacheWarming warming = CacheWarming::Shared;
    // The host learns of a decode step's routing and the next layer's prediction from flags the
    // copying kernels raise, not from events (bench/results/2026-11-30-chain-events).
    // STRATA_TIERS_ROUTING_FLAG=0.
    bool routing_flags = true;
    // The routing up and the CPU lane's sum down as words carrying their own sequence tag, not as
    // data followed by a flag with a fence (bench/results/2026-12-01-chain-signals).
    // STRATA_TIERS_TAGGED=0.
    bool tagged_words = true;
    // A decode step's end event after the combine (as prompt steps do) instead of before the wait
    // for the lane (bench/results/2026-11-30-chain-events). STRATA_TIERS_STEP_DONE=combine.
    bool decode_done_after_combine = false;
    // Copy --expert-prefetch experts ahead every decode step instead of the count balanced from
    // measured costs (experts/copies_ahead.h; bench/results/2026-12-01-chain-signals).
    // STRATA_TIERS_AHEAD=fixed.
    bool fixed_copies_ahead = false;
    // The CPU lane's prompt share counts the copies already queued on the link
    // (bench/results/2026-11-30-scan-steps). STRATA_TIERS_LINK_BACKLOG=0.
    bool link_backlog = true;
    // Prompt (scan) steps copy the next layer's experts ahead of its routing
    // (bench/results/2026-11-30-scan-steps). STRATA_TIERS_STREAM_AHEAD=0.
    bool stream_ahead = true;
    // Another share of a layer's experts that makes a step a scan (experts/scan_steps.h); tests
    // lower it so that the fixtures' small prompts are scans. STRATA_TIERS_SCAN_COVERAGE.
    std::optional<double> scan_coverage = std::nullopt;
    // Another size of the streaming ring than the plan's (rounded down to even, at least 2), to
    // compare ring sizes. STRATA_TIERS_STAGING.
    std::optional<uint64_t> staging_slots = std::nullopt;
    // Another bias of decode's CPU/link split than MissLanes' default (experts/miss_lanes.h).
    // STRATA_TIERS_SHARE_BIAS.
    std::optional<double> decode_share_bias = std::nullopt;
    // > 0: the N-th forward pass through the tiers is printed as a timeline of GPU events and host
    // moments on stderr (experts/tier_timeline.h), a diagnostic. STRATA_TIERS_TIMELINE=N.
    int timeline_pass = 0;
};

}  // namespace strata
