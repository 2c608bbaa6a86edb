#include "server/engine_connections.h"

#include <httplib.h>

namespace strata::server {

void EngineConnections::add(httplib::Client* client, std::function<void()> on_abort) {
    std::lock_guard lock(mutex_);
    open_[client] = std::move(on_abort);
}

void EngineConnections::remove(httplib::Client* client) {
    std::lock_guard lock(mutex_);
    open_.erase(client);
}

void EngineConnections::abort_all() {
    // Under the lock: a reader removes its client (and destroys it) only after taking the lock,
    // so none is stopped while being destroyed.
    std::lock_guard lock(mutex_);
    for (auto& [client, on_abort] : open_) {
        on_abort();
        client->stop();
    }
}

}  // namespace strata::server
