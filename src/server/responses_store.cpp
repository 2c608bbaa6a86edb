#include "server/responses_store.h"

namespace strata::server {

void ResponseStore::put(const std::string& id, StoredResponse response) {
    if (capacity_ == 0) return;
    std::lock_guard lock(mutex_);
    if (auto it = index_.find(id); it != index_.end()) {
        entries_.erase(it->second);
        index_.erase(it);
    }
    entries_.emplace_front(id, std::move(response));
    index_[id] = entries_.begin();
    while (entries_.size() > capacity_) {
        index_.erase(entries_.back().first);
        entries_.pop_back();
    }
}

std::optional<StoredResponse> ResponseStore::get(const std::string& id) {
    std::lock_guard lock(mutex_);
    auto it = index_.find(id);
    if (it == index_.end()) return std::nullopt;
    entries_.splice(entries_.begin(), entries_, it->second);
    return it->second->second;
}

bool ResponseStore::erase(const std::string& id) {
    std::lock_guard lock(mutex_);
    auto it = index_.find(id);
    if (it == index_.end()) return false;
    entries_.erase(it->second);
    index_.erase(it);
    return true;
}

size_t ResponseStore::size() const {
    std::lock_guard lock(mutex_);
    return entries_.size();
}

}  // namespace strata::server
