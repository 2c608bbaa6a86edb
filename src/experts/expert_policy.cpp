#include "experts/expert_policy.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/check.h"

namespace strata {

namespace {

// Puts the first `count` elements of v in order (by `less`, a strict total order), leaving the
// rest in any order after them: what a full sort would put first, at O(n) for a small count.
template <typename T, typename Less>
void sort_first(std::vector<T>& v, size_t count, Less less) {
    if (count >= v.size()) std::sort(v.begin(), v.end(), less);
    else std::partial_sort(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(count), v.end(), less);
}

}  // namespace

void LruPolicy::record_use(std::span<const uint32_t> ids) {
    ++clock_;
    for (uint32_t id : ids) last_use_[id] = clock_;
}

PolicyDecision LruPolicy::decide(std::span<const uint32_t> misses, std::span<const uint32_t> residents, size_t free_slots,
                                 size_t max_copies) {
    // Victims oldest first (ties by id, so eviction orders are reproducible). Only the oldest few
    // can be needed (one per admission), so only they are put in order: a decode step on a card of
    // thousands of slots has ~100 µs for all its host work, and sorting every resident took
    // about that each step (bench/results/2026-11-30-split-feedback).
    std::vector<uint32_t>& victims = victims_;
    victims.clear();
    for (uint32_t id : residents)
        if (last_use_[id] < clock_) victims.push_back(id);
    const auto older = [&](uint32_t a, uint32_t b) { return last_use_[a] != last_use_[b] ? last_use_[a] < last_use_[b] : a < b; };
    sort_first(victims, std::min(misses.size(), max_copies), older);
    PolicyDecision d;
    size_t next_victim = 0;
    for (uint32_t id : misses) {
        if (d.admit.size() == max_copies) break;
        if (free_slots > 0) {
            --free_slots;
        } else if (next_victim < victims.size()) {
            d.evict.push_back(victims[next_victim++]);
        } else {
            break;  // every resident was used this step
        }
        d.admit.push_back(id);
    }
    return d;
}

LfuDecayPolicy::LfuDecayPolicy(size_t key_count, double decay)
    : decay_(decay), log_decay_(std::log(decay)), score_(key_count, 0.0), stamp_(key_count, 0),
      key_(key_count, -std::numeric_limits<double>::infinity()) {
    STRATA_CHECK(decay > 0.0 && decay <= 1.0, "LFU decay must be in (0, 1]");
}

double LfuDecayPolicy::score(uint32_t id) const {
    if (score_[id] == 0.0) return 0.0;
    return score_[id] * std::pow(decay_, static_cast<double>(clock_ - stamp_[id]));
}

void LfuDecayPolicy::record_use(std::span<const uint32_t> ids) {
    ++clock_;
    for (uint32_t id : ids) {
        score_[id] = score(id) + 1.0;  // score() already decays to the new clock
        stamp_[id] = clock_;
        key_[id] = std::log(score_[id]) - static_cast<double>(clock_) * log_decay_;
    }
}

PolicyDecision LfuDecayPolicy::decide(std::span<const uint32_t> misses, std::span<const uint32_t> residents,
                                      size_t free_slots, size_t max_copies) {
    // Hottest misses against coldest residents: once the hottest remaining miss does not beat the
    // coldest remaining resident, no later pair can.
    // Only as many of each as there can be admissions are put in order (see LruPolicy::decide).
    const size_t needed = std::min(misses.size(), max_copies);
    auto by_score = [&](std::span<const uint32_t> ids, bool descending) {
        std::vector<std::pair<double, uint32_t>> v;
        v.reserve(ids.size());
        for (uint32_t id : ids) v.emplace_back(key_[id], id);
        sort_first(v, needed, [&](const auto& a, const auto& b) {
            if (a.first != b.first) return descending ? a.first > b.first : a.first < b.first;
            return a.second < b.second;
        });
        return v;
    };
    const auto candidates = by_score(misses, true);
    const auto victims = by_score(residents, false);
    PolicyDecision d;
    size_t next_victim = 0;
    for (const auto& [cand_score, id] : candidates) {
        if (d.admit.size() == max_copies) break;
        if (free_slots > 0) {
            --free_slots;
        } else if (next_victim < victims.size() && victims[next_victim].first < cand_score) {
            d.evict.push_back(victims[next_victim++].second);
        } else {
            break;
        }
        d.admit.push_back(id);
    }
    return d;
}

std::optional<PolicyKind> policy_kind_from_name(std::string_view name) {
    if (name == "lru") return PolicyKind::Lru;
    if (name == "lfu") return PolicyKind::LfuDecay;
    return std::nullopt;
}

std::unique_ptr<ExpertPolicy> make_expert_policy(PolicyKind kind, size_t key_count, double decay) {
    switch (kind) {
        case PolicyKind::Lru: return std::make_unique<LruPolicy>(key_count);
        case PolicyKind::LfuDecay: return std::make_unique<LfuDecayPolicy>(key_count, decay);
    }
    STRATA_CHECK(false, "unknown expert policy kind");
    return nullptr;
}

TraceReplay replay_trace(ExpertPolicy& policy, std::span<const std::vector<uint32_t>> steps, size_t key_count, size_t slots,
                         size_t max_copies) {
    TraceReplay r;
    std::vector<char> resident(key_count, 0);
    std::vector<uint32_t> residents, misses;
    for (const std::vector<uint32_t>& step : steps) {
        misses.clear();
        for (uint32_t id : step) {
            if (resident[id]) ++r.hits;
            else {
                ++r.misses;
                misses.push_back(id);
            }
        }
        policy.record_use(step);
        const PolicyDecision d = policy.decide(misses, residents, slots - residents.size(), max_copies);
        for (uint32_t id : d.evict) {
            STRATA_CHECK(resident[id], "policy evicted an expert that is not resident");
            resident[id] = 0;
            residents.erase(std::find(residents.begin(), residents.end(), id));
            r.evictions.push_back(id);
        }
        for (uint32_t id : d.admit) {
            STRATA_CHECK(!resident[id] && residents.size() < slots, "policy admitted past the slots");
            resident[id] = 1;
            residents.push_back(id);
            r.admissions.push_back(id);
        }
    }
    return r;
}

}  // namespace strata
