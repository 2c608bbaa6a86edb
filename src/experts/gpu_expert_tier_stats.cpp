// GpuExpertTierStats arithmetic (experts/gpu_expert_tiers.h); compiled in every build, so reports
// of a CPU-only binary link too.
#include "experts/gpu_expert_tiers.h"

namespace strata {

void GpuExpertTierStats::add_window(const GpuExpertTierStats& before, const GpuExpertTierStats& after) {
    layer_steps += after.layer_steps - before.layer_steps;
    expert_uses += after.expert_uses - before.expert_uses;
    hits += after.hits - before.hits;
    cpu_experts += after.cpu_experts - before.cpu_experts;
    streamed_experts += after.streamed_experts - before.streamed_experts;
    routed_pairs += after.routed_pairs - before.routed_pairs;
    hit_pairs += after.hit_pairs - before.hit_pairs;
    cpu_pairs += after.cpu_pairs - before.cpu_pairs;
    streamed_pairs += after.streamed_pairs - before.streamed_pairs;
    admissions += after.admissions - before.admissions;
    bytes_streamed += after.bytes_streamed - before.bytes_streamed;
    bytes_cpu += after.bytes_cpu - before.bytes_cpu;
    prefetched += after.prefetched - before.prefetched;
    prefetch_offered += after.prefetch_offered - before.prefetch_offered;
    prefetch_hits += after.prefetch_hits - before.prefetch_hits;
    lanes_awaited_by_gpu += after.lanes_awaited_by_gpu - before.lanes_awaited_by_gpu;
    warmed_experts += after.warmed_experts - before.warmed_experts;
    warm_offered += after.warm_offered - before.warm_offered;
    warm_used += after.warm_used - before.warm_used;
    seconds_wait_gpu += after.seconds_wait_gpu - before.seconds_wait_gpu;
    seconds_cpu += after.seconds_cpu - before.seconds_cpu;
    seconds_plan += after.seconds_plan - before.seconds_plan;
    seconds_link += after.seconds_link - before.seconds_link;
    seconds_lane_to_routing += after.seconds_lane_to_routing - before.seconds_lane_to_routing;
    seconds_routing_to_lane += after.seconds_routing_to_lane - before.seconds_routing_to_lane;
    seconds_lane_wake += after.seconds_lane_wake - before.seconds_lane_wake;
    seconds_lane_join += after.seconds_lane_join - before.seconds_lane_join;
    cpu_expert_us = after.cpu_expert_us;
    cpu_token_us = after.cpu_token_us;
    cpu_cost_scale = after.cpu_cost_scale;
    decode_cpu_share = after.decode_cpu_share;
}

}  // namespace strata
