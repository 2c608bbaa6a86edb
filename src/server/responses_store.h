#pragma once
// The responses kept for GET /v1/responses/{id} and for previous_response_id: the response
// object as it was answered, and the conversation it ended (its input and earlier turns as chat
// messages, its reply as an assistant message), so that a request naming it continues that
// conversation and its prompt extends the last one's (the KV cache holds it). Bounded by a count:
// the least recently used response is dropped when a new one would pass it. Thread-safe.
//
//   ResponseStore store(256);
//   store.put(id, {response_json, conversation});
//   if (auto kept = store.get(id)) ... kept->conversation ...
//   store.erase(id);

#include <cstddef>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include <nlohmann/json.hpp>

namespace strata::server {

struct StoredResponse {
    nlohmann::json response;
    nlohmann::ordered_json conversation;
};

class ResponseStore {
public:
    // `capacity` 0 keeps nothing (every lookup is a miss).
    explicit ResponseStore(size_t capacity) : capacity_(capacity) {}

    void put(const std::string& id, StoredResponse response);
    // A copy, so that the caller holds no lock; a hit counts as a use.
    std::optional<StoredResponse> get(const std::string& id);
    bool erase(const std::string& id);
    size_t size() const;
    size_t capacity() const { return capacity_; }

private:
    using Entry = std::pair<std::string, StoredResponse>;
    const size_t capacity_;
    mutable std::mutex mutex_;
    std::list<Entry> entries_;  // most recently used first
    std::unordered_map<std::string, std::list<Entry>::iterator> index_;
};

}  // namespace strata::server
