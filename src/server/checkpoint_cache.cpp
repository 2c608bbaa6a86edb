#include "server/checkpoint_cache.h"

#include <algorithm>

namespace strata::server {

void CheckpointCache::erase(std::map<Key, Entry>::iterator it) {
    stats_.bytes -= it->second.snapshot.bytes.size();
    entries_.erase(it);
}

bool CheckpointCache::put(int slot, RecurrentSnapshot snapshot) {
    std::lock_guard lock(mutex_);
    const uint64_t size = snapshot.bytes.size();
    if (size > stats_.budget_bytes) {
        ++stats_.refused;
        return false;
    }
    const Key key{slot, snapshot.n_past};
    if (auto it = entries_.find(key); it != entries_.end()) erase(it);
    // Least recently used first; a scan, since a budget holds tens of states, not thousands.
    while (stats_.bytes + size > stats_.budget_bytes) {
        auto oldest = std::min_element(entries_.begin(), entries_.end(),
                                       [](const auto& a, const auto& b) { return a.second.last_used < b.second.last_used; });
        erase(oldest);
        ++stats_.evicted;
    }
    stats_.bytes += size;
    ++stats_.stored;
    entries_.emplace(key, Entry{std::move(snapshot), ++clock_});
    return true;
}

int64_t CheckpointCache::best(int slot, int64_t limit) const {
    std::lock_guard lock(mutex_);
    // The first entry past (slot, limit), then one back: the latest of this slot at or before it.
    auto it = entries_.upper_bound(Key{slot, limit});
    if (it == entries_.begin()) return 0;
    --it;
    return it->first.first == slot ? it->first.second : 0;
}

const RecurrentSnapshot* CheckpointCache::take(int slot, int64_t n_past) {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(Key{slot, n_past});
    if (it == entries_.end()) return nullptr;
    it->second.last_used = ++clock_;
    return &it->second.snapshot;
}

void CheckpointCache::drop_after(int slot, int64_t n) {
    std::lock_guard lock(mutex_);
    for (auto it = entries_.upper_bound(Key{slot, n}); it != entries_.end() && it->first.first == slot;) {
        auto next = std::next(it);
        erase(it);
        ++stats_.dropped;
        it = next;
    }
}

void CheckpointCache::count_hit() {
    std::lock_guard lock(mutex_);
    ++stats_.hits;
}

void CheckpointCache::count_miss() {
    std::lock_guard lock(mutex_);
    ++stats_.misses;
}

CheckpointStats CheckpointCache::stats() const {
    std::lock_guard lock(mutex_);
    CheckpointStats s = stats_;
    s.entries = static_cast<int64_t>(entries_.size());
    return s;
}

}  // namespace strata::server
