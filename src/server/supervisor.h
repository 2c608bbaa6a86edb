#pragma once
// `strata serve`'s supervisor: the process that owns the port and keeps an engine running. The
// engine (model, scheduler and the API routes) runs in a child process (server/engine_process.h)
// on a loopback port; every request is forwarded to it (server/engine_proxy.h). When the engine
// crashes, is killed, or hangs (an engine step, or an unanswered /health, longer than the
// watchdog), the requests in flight get a clear 5xx or a closing error event, the old process is
// reaped (its memory, GPU memory included, back to the system) before a new one starts, and the
// port serves again, without a restart of the process the user started. /health adds the
// engine's pid and restart count, /metrics strata_engine_restarts_total.
//
//   Supervisor sup(options);
//   STRATA_TRY(sup.bind());
//   sup.start();          // serves, and starts the first engine
//   ...                   // until SIGINT/SIGTERM
//   sup.stop();           // the engine drains and exits, then the port closes

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/status.h"
#include "server/engine_connections.h"

namespace httplib {
class Server;
}

namespace strata::server {

class EngineProcess;

struct SupervisorOptions {
    std::vector<std::string> engine_argv;  // this executable's `serve` arguments
    std::string host = "127.0.0.1";
    int port = 8080;
    std::chrono::seconds watchdog{300};      // longest engine step, or silence of its /health
    std::chrono::seconds request_timeout{600};
    std::chrono::seconds drain{60};          // how long a stopping engine may finish its requests
    size_t max_body_bytes = 8u << 20;
    int http_threads = 32;
};

class Supervisor {
public:
    explicit Supervisor(SupervisorOptions options);
    ~Supervisor();
    Supervisor(const Supervisor&) = delete;
    Supervisor& operator=(const Supervisor&) = delete;

    Status bind();
    int port() const { return port_; }
    void start();
    void stop();

private:
    void install_routes();
    void keep_engine_running();
    // Watches a started engine until it ends (or the supervisor stops); why it ended.
    std::string watch(EngineProcess& engine, int engine_port);
    int engine_port() const;

    SupervisorOptions options_;
    std::unique_ptr<httplib::Server> server_;
    // Shared with the readers of forwarded requests, which may outlive a request's handler.
    std::shared_ptr<EngineConnections> connections_ = std::make_shared<EngineConnections>();
    int port_ = -1;
    std::thread http_thread_, monitor_thread_;

    mutable std::mutex mutex_;
    std::condition_variable stop_cv_;
    bool stopping_ = false;
    int engine_port_ = 0;  // 0: no engine answering (starting, restarting, stopped)
    int engine_pid_ = -1;
    int restarts_ = 0;
    std::string last_failure_;
};

}  // namespace strata::server
