#include "server/supervisor.h"

#include <httplib.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "server/engine_process.h"
#include "server/engine_proxy.h"

namespace strata::server {
namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kHealthInterval = std::chrono::milliseconds(500);
// An engine that ran this long before it ended is restarted at once; one that ends sooner waits
// (1, 2, 4 ... 30 s) so that a model that crashes at load does not spin.
constexpr auto kHealthyRun = std::chrono::seconds(10);
constexpr auto kLongestBackoff = std::chrono::seconds(30);
constexpr auto kPortReport = std::chrono::seconds(60);
// /health and /metrics ask the engine for its part; one that does not answer in this long is left out.
constexpr auto kPassThroughTimeout = std::chrono::seconds(2);

struct EngineHealth {
    bool answered = false;
    double step_seconds = 0;  // how long the engine's current step has run (0: idle)
};

EngineHealth ask_health(int port, std::chrono::seconds timeout) {
    httplib::Client client("127.0.0.1", port);
    client.set_connection_timeout(timeout);
    client.set_read_timeout(timeout);
    auto r = client.Get("/health");
    EngineHealth h;
    if (!r) return h;
    h.answered = true;
    const auto body = nlohmann::json::parse(r->body, nullptr, false);
    if (body.is_object() && body.contains("step_seconds") && body["step_seconds"].is_number()) {
        h.step_seconds = body["step_seconds"].get<double>();
    }
    return h;
}

}  // namespace

Supervisor::Supervisor(SupervisorOptions options) : options_(std::move(options)), server_(std::make_unique<httplib::Server>()) {
    server_->new_task_queue = [n = options_.http_threads] { return new httplib::ThreadPool(static_cast<size_t>(n)); };
    // Bodies a little over the engine's limit still reach it, so that it refuses them in the route's shape.
    server_->set_payload_max_length(options_.max_body_bytes * 2);
    server_->set_read_timeout(options_.request_timeout);
    server_->set_write_timeout(options_.request_timeout);
    install_routes();
}

Supervisor::~Supervisor() {
    if (monitor_thread_.joinable() || http_thread_.joinable()) stop();
}

Status Supervisor::bind() {
    port_ = options_.port == 0 ? server_->bind_to_any_port(options_.host) : (server_->bind_to_port(options_.host, options_.port) ? options_.port : -1);
    if (port_ < 0) {
        return Status::error("cannot listen on {}:{} (in use, or not an address of this machine): choose another --port or --host",
                             options_.host, options_.port);
    }
    return Status::ok();
}

void Supervisor::start() {
    http_thread_ = std::thread([this] { server_->listen_after_bind(); });
    monitor_thread_ = std::thread([this] { keep_engine_running(); });
}

void Supervisor::stop() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    stop_cv_.notify_all();
    if (monitor_thread_.joinable()) monitor_thread_.join();  // the engine has drained and exited
    server_->stop();
    if (http_thread_.joinable()) http_thread_.join();
}

int Supervisor::engine_port() const {
    std::lock_guard lock(mutex_);
    return engine_port_;
}

void Supervisor::install_routes() {
    httplib::Server& s = *server_;
    s.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
        const int port = engine_port();
        nlohmann::json body;
        if (port != 0) {
            httplib::Client client("127.0.0.1", port);
            client.set_connection_timeout(kPassThroughTimeout);
            client.set_read_timeout(kPassThroughTimeout);
            if (auto r = client.Get("/health")) {
                body = nlohmann::json::parse(r->body, nullptr, false);
                res.status = r->status;
            }
        }
        if (!body.is_object()) {
            std::lock_guard lock(mutex_);
            res.status = 503;
            // An engine that does not answer is the watchdog's to judge; until then it is "unresponsive".
            body = {{"status", port != 0 ? "unresponsive" : restarts_ > 0 ? "restarting" : "loading"}};
        }
        std::lock_guard lock(mutex_);
        body["engine_pid"] = engine_pid_;
        body["engine_restarts"] = restarts_;
        if (!last_failure_.empty()) body["engine_last_failure"] = last_failure_;
        res.set_content(body.dump(), "application/json");
    });
    s.Get("/metrics", [this](const httplib::Request& req, httplib::Response& res) {
        std::string text;
        if (const int port = engine_port(); port != 0) {
            httplib::Client client("127.0.0.1", port);
            client.set_connection_timeout(kPassThroughTimeout);
            client.set_read_timeout(kPassThroughTimeout);
            httplib::Headers headers;
            for (const char* h : {"Authorization", "x-api-key"}) {
                if (req.has_header(h)) headers.emplace(h, req.get_header_value(h));
            }
            if (auto r = client.Get("/metrics", headers)) {
                if (r->status != 200) {
                    res.status = r->status;
                    res.set_content(r->body, r->get_header_value("Content-Type"));
                    return;
                }
                text = r->body;
            }
        }
        std::lock_guard lock(mutex_);
        text += "# HELP strata_engine_restarts_total Engine processes the supervisor started after one ended (crash, kill, watchdog)\n";
        text += "# TYPE strata_engine_restarts_total counter\n";
        text += fmt::format("strata_engine_restarts_total {}\n", restarts_);
        res.set_content(text, "text/plain; version=0.0.4");
    });
    const auto forward = [this](const httplib::Request& req, httplib::Response& res) {
        const int port = engine_port();
        if (port == 0) {
            std::lock_guard lock(mutex_);
            return reply_engine_unavailable(req, res, restarts_ > 0 ? fmt::format("the engine is restarting after it stopped ({}): retry shortly", last_failure_)
                                                                    : std::string("the engine is starting: retry shortly"));
        }
        forward_to_engine(port, req, res, options_.request_timeout, connections_);
    };
    s.Get(".*", forward);
    s.Post(".*", forward);
    s.Delete(".*", forward);
    s.Options(".*", forward);
    s.Put(".*", forward);
    s.Patch(".*", forward);
}

void Supervisor::keep_engine_running() {
    int quick_failures = 0;
    while (true) {
        {
            std::lock_guard lock(mutex_);
            if (stopping_) return;
        }
        const auto started = Clock::now();
        std::string why;
        auto started_engine = EngineProcess::start(options_.engine_argv);
        if (!started_engine) {
            why = started_engine.status().message();
        } else {
            std::unique_ptr<EngineProcess> engine = std::move(*started_engine);
            if (auto port = engine->read_port(kPortReport)) {
                {
                    std::lock_guard lock(mutex_);
                    engine_port_ = *port;
                    engine_pid_ = engine->pid();
                }
                why = watch(*engine, *port);
            } else {
                engine->kill();
                why = fmt::format("it reported no port ({})", engine->wait());
            }
            // Requests now wait for the next engine; this one is reaped (its memory returned)
            // before a new one starts, and the requests still reading from it fail now.
            {
                std::lock_guard lock(mutex_);
                engine_port_ = 0;
                engine_pid_ = -1;
            }
            connections_->abort_all();
            engine->wait();
        }
        std::unique_lock lock(mutex_);
        if (stopping_) return;
        ++restarts_;
        last_failure_ = why;
        quick_failures = Clock::now() - started < kHealthyRun ? quick_failures + 1 : 0;
        const auto backoff = quick_failures == 0 ? std::chrono::seconds(0)
                                                 : std::min<std::chrono::seconds>(kLongestBackoff, std::chrono::seconds(1 << std::min(quick_failures - 1, 5)));
        fmt::print(stderr, "strata serve: the engine stopped ({}); starting another{}\n", why,
                   backoff.count() ? fmt::format(" in {} s", backoff.count()) : "");
        stop_cv_.wait_for(lock, backoff, [&] { return stopping_; });
    }
}

std::string Supervisor::watch(EngineProcess& engine, int engine_port) {
    const std::chrono::seconds health_timeout = std::min<std::chrono::seconds>(options_.watchdog, std::chrono::seconds(10));
    auto last_answer = Clock::now();
    std::string why;
    while (true) {
        if (auto ended = engine.poll_exit()) return why.empty() ? *ended : why + ", " + *ended;
        {
            std::unique_lock lock(mutex_);
            if (stop_cv_.wait_for(lock, kHealthInterval, [&] { return stopping_; })) break;
        }
        if (!why.empty()) continue;  // killed: waiting for it to end
        const EngineHealth h = ask_health(engine_port, health_timeout);
        const auto now = Clock::now();
        if (h.answered) last_answer = now;
        const double watchdog = static_cast<double>(options_.watchdog.count());
        if (h.step_seconds > watchdog) {
            why = fmt::format("an engine step ran {:.0f} s, longer than --watchdog {} s", h.step_seconds, options_.watchdog.count());
        } else if (now - last_answer > options_.watchdog) {
            why = fmt::format("the engine did not answer for longer than --watchdog {} s", options_.watchdog.count());
        }
        if (!why.empty()) {
            fmt::print(stderr, "strata serve: {}: killing it (pid {})\n", why, engine.pid());
            engine.kill();
        }
    }
    // Stopping: the engine finishes its requests (its own --drain-timeout), then exits.
    engine.request_stop();
    const auto deadline = Clock::now() + options_.drain + std::chrono::seconds(10);
    while (!engine.poll_exit()) {
        if (Clock::now() > deadline) {
            engine.kill();
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return engine.wait();
}

}  // namespace strata::server
