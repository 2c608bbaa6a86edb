#include "experts/miss_lanes.h"

#include <algorithm>
#include <cmath>

namespace strata {

std::optional<MissLane> miss_lane_from_name(std::string_view name) {
    if (name == "auto") return MissLane::Auto;
    if (name == "cpu") return MissLane::Cpu;
    if (name == "stream") return MissLane::Stream;
    return std::nullopt;
}

const MissSplit& MissLanes::split(std::vector<MissedExpert>& misses, uint64_t expert_bytes, double link_backlog_s) {
    MissSplit& s = split_;
    s.cpu.clear(), s.streamed.clear();
    s.decode_like = false, s.predicted_cpu_s = 0;
    std::stable_sort(misses.begin(), misses.end(), [](const MissedExpert& a, const MissedExpert& b) {
        if (a.tokens != b.tokens) return a.tokens < b.tokens;
        if (a.heat != b.heat) return a.heat < b.heat;
        return a.expert < b.expert;
    });
    size_t moved = 0;
    if (!misses.empty() && mode_ != MissLane::Stream) {
        const double copy_one = static_cast<double>(expert_bytes) / (link_gbps_ * 1e9);
        double copy_total = copy_one * static_cast<double>(misses.size());
        double cpu_total = 0.0;
        s.decode_like = mode_ == MissLane::Auto && misses.back().tokens <= 2;
        if (s.decode_like) {
            moved = static_cast<size_t>(std::lround(decode_cpu_share_ * static_cast<double>(misses.size())));
        } else {
            for (const MissedExpert& m : misses) {
                const double cost = cpu_cost(m.tokens);
                if (mode_ != MissLane::Cpu && cpu_total + cost > std::max(0.0, link_backlog_s) + copy_total - copy_one) break;
                cpu_total += cost;
                copy_total -= copy_one;
                ++moved;
            }
            if (moved == 0 && misses.size() >= 2 && mode_ == MissLane::Auto && ++steps_since_cpu_ >= kStepsBetweenCpuChecks) {
                moved = 1;
                cpu_total = cpu_cost(misses[0].tokens);
            }
            s.predicted_cpu_s = cpu_total;
        }
        if (moved > 0) steps_since_cpu_ = 0;
    }
    for (size_t i = 0; i < misses.size(); ++i) (i < moved ? s.cpu : s.streamed).push_back(misses[i].expert);
    std::sort(s.streamed.begin(), s.streamed.end());
    return s;
}

void MissLanes::decode_feedback(bool gpu_part_done) {
    if (!split_.decode_like) return;
    if (gpu_part_done) decode_cpu_share_ = std::max(0.0, decode_cpu_share_ - kDecodeShareStep);
    else decode_cpu_share_ = std::min(1.0, decode_cpu_share_ + kDecodeShareStep * share_bias_);
}

// Slowly, to ride out noise; bounded so that one odd step cannot switch a lane off for good.
void MissLanes::cpu_feedback(double seconds) {
    if (split_.predicted_cpu_s <= 0) return;
    const double ratio = seconds / split_.predicted_cpu_s;
    cpu_scale_ = std::clamp(0.9 * cpu_scale_ + 0.1 * cpu_scale_ * ratio, 0.25, 8.0);
}

}  // namespace strata
