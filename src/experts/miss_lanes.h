#pragma once
// Which of a MoE layer's missing experts (not in a VRAM slot) the CPU computes from RAM and which
// are streamed over the link into staging slots and computed by the GPU: the decision half of the
// GPU expert tiers (gpu_expert_tiers_impl.h), free of GPU code so that it is tested on any
// machine. Both lanes run at once, so a layer costs the longer of the two.
// - Prompt-like steps (an expert with more than two tokens) go by a cost model: the CPU takes
//   misses, fewest tokens first, while its predicted time stays within the copies' time of what
//   is left (after the copies already queued for the link). The CPU's per-expert and per-token costs are measured at start-up (set_cpu_costs)
//   and scaled by what CPU steps really took (cpu_feedback). Every 32 such steps without a CPU
//   share, one miss goes to the CPU anyway, so that a model that once judged the CPU too slow is
//   checked against what it really does.
// - Decode-like steps (one or two tokens per expert) split by a share that feedback keeps where
//   the GPU's part is done before the CPU lane ends three steps in four (decode_feedback): at
//   these sizes the CPU's cost is mostly fixed (waking the pool, three passes), which a
//   per-expert model gets wrong in both directions. Three in four, not one in two: a GPU part
//   that ends late is late by more (it waits on the link, which other copies share) than a lane
//   that ends late, and either holds up the layer's serial chain (bench/results/
//   2026-11-30-split-feedback: 1:1 against 3:1 measured 63.9 against 67.7 tok/s, every expert
//   in RAM).
// - Among misses with as many tokens the coldest by the cache policy go to the CPU: streamed
//   misses may be admitted to the cache, the CPU's never are.
//
//   MissLanes lanes(MissLane::Auto);
//   lanes.set_link(54.0);  lanes.set_cpu_costs(1.2e-4, 2e-6);
//   const MissSplit& s = lanes.split(misses, expert_bytes);   // s.cpu, s.streamed
//   ... run both lanes ...
//   lanes.decode_feedback(gpu_part_was_done_when_the_cpu_ended);

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace strata {

struct MissedExpert {
    int32_t expert = 0;
    int64_t tokens = 0;  // the step's tokens routed to it
    double heat = 0;     // the cache policy's ExpertPolicy::heat: higher is hotter
};

struct MissSplit {
    std::vector<int32_t> cpu;       // in the order they were chosen (coldest, fewest tokens first)
    std::vector<int32_t> streamed;  // by expert id
    bool decode_like = false;       // split by the decode share (decode_feedback applies)
    double predicted_cpu_s = 0;     // the cost model's CPU time (prompt-like steps; 0 otherwise)
};

// Where misses go: both lanes by measured cost (as above), every miss on the CPU, or every miss
// streamed over the link (--miss-lane; the last two for measurements and tests).
enum class MissLane { Auto, Cpu, Stream };
std::optional<MissLane> miss_lane_from_name(std::string_view name);  // "auto", "cpu", "stream"

class MissLanes {
public:
    explicit MissLanes(MissLane mode) : mode_(mode) {}

    void set_link(double gbps) { link_gbps_ = gbps > 0 ? gbps : link_gbps_; }
    void set_cpu_costs(double expert_s, double token_s) { cpu_expert_s_ = expert_s, cpu_token_s_ = token_s; }

    // Splits one step's misses (any order; sorted here, in the order of choice); the result stays
    // valid until the next call. Neither allocates once its vectors have grown to a step's size.
    // link_backlog_s: how long the link is still busy with copies queued before this step's (the
    // experts a scan step streamed ahead for it): the GPU's part cannot end before those and this
    // step's copies are done, so the CPU lane has that much longer too (prompt-like steps).
    const MissSplit& split(std::vector<MissedExpert>& misses, uint64_t expert_bytes, double link_backlog_s = 0);
    // After a step (ignored unless the last split was decode-like): whether the GPU's part (the copies and the products
    // after them) was already done when the CPU lane ended. A CPU that finished first takes a
    // bigger share next time, one that finished last a smaller.
    void decode_feedback(bool gpu_part_done);
    // How much bigger the feedback's step towards the CPU is than its step away: the share settles
    // where the GPU's part is done first bias / (bias + 1) of the time (1: half; the default 3:
    // three steps in four).
    void set_decode_share_bias(double up_over_down) { share_bias_ = up_over_down > 0 ? up_over_down : kDecodeShareBias; }
    // After a prompt-like step's CPU lane: the seconds it took, against the predicted time.
    void cpu_feedback(double seconds);

    double decode_cpu_share() const { return decode_cpu_share_; }
    // The share of a decode step's misses the CPU is expected to take: the feedback's share, or
    // all or none when the mode forces a lane.
    double expected_decode_cpu_share() const {
        return mode_ == MissLane::Cpu ? 1.0 : mode_ == MissLane::Stream ? 0.0 : decode_cpu_share_;
    }
    double cpu_scale() const { return cpu_scale_; }
    double cpu_expert_s() const { return cpu_expert_s_; }
    double cpu_token_s() const { return cpu_token_s_; }

    static constexpr double kDecodeShareStep = 0.02;  // the step away from the CPU
    static constexpr double kDecodeShareBias = 3.0;   // the step towards it, in those
    static constexpr int kStepsBetweenCpuChecks = 32;

private:
    double cpu_cost(int64_t tokens) const {
        return cpu_scale_ * (cpu_expert_s_ + cpu_token_s_ * (static_cast<double>(tokens) - 1.0));
    }

    MissLane mode_;
    double link_gbps_ = 10.0;
    double cpu_expert_s_ = 1e-4, cpu_token_s_ = 1e-5, cpu_scale_ = 1.0;
    double decode_cpu_share_ = 0.5;
    double share_bias_ = kDecodeShareBias;
    int steps_since_cpu_ = 0;
    MissSplit split_;
};

}  // namespace strata
