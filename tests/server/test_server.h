#pragma once
// The end-to-end tests' server: the real HTTP server on 127.0.0.1 (an ephemeral port) with its own
// scheduler over the tiny model, and the client calls they make (a JSON POST, a streamed POST
// that can hang up early).
//
//   TestServer srv({});                       // or ({.api_key = ...}, SchedulerOptions{...}, &model)
//   auto c = srv.client();
//   auto r = post(c, "/v1/messages", body, {{"x-api-key", "k"}});
//   Streamed s = post_stream(c, "/v1/messages", streamed_body);

#include <httplib.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "server/http_server.h"
#include "server_test_support.h"

namespace strata::server::test {

using namespace std::chrono_literals;
using json = nlohmann::json;

// One tiny model for every test of the binary.
inline Engine& tiny_model() {
    static Engine* model = test::load_tiny_model().release();
    return *model;
}

// A server with its own scheduler, listening until destroyed. `model` null: it stays "loading".
class TestServer {
public:
    explicit TestServer(ServerOptions o, SchedulerOptions so = {.n_slots = 2, .n_ctx = 512, .n_batch = 64, .max_queue = 16},
                        Engine* model = &tiny_model())
        : ctx_(prepare(std::move(o))), http_(ctx_) {
        if (model) {
            scheduler_ = std::make_unique<Scheduler>(*model->model, *model->tokenizer, pool_, so, &ctx_.metrics);
            ctx_.ready(*model, *scheduler_);
        }
        Status s = http_.bind();
        STRATA_CHECK(s.is_ok(), s.message().c_str());
        thread_ = std::thread([this] { http_.run(); });
        httplib::Client c("127.0.0.1", port());
        // Up to 30 s: under a loaded CI machine the listener thread can start late.
        for (int i = 0; i < 3000 && !c.Get("/health"); ++i) std::this_thread::sleep_for(10ms);
    }
    ~TestServer() {
        http_.stop();
        thread_.join();
        scheduler_.reset();
    }
    int port() const { return http_.port(); }
    ServerContext& ctx() { return ctx_; }
    httplib::Client client() const {
        httplib::Client c("127.0.0.1", port());
        c.set_read_timeout(60, 0);
        return c;
    }

private:
    static ServerOptions prepare(ServerOptions o) {
        o.host = "127.0.0.1";  // loopback only, ever
        o.port = 0;
        if (o.model_id.empty()) o.model_id = "tiny";
        if (o.http_threads == 0) o.http_threads = 48;
        return o;
    }
    ThreadPool pool_{ThreadPool::Options{.threads = 2}};
    ServerContext ctx_;
    std::unique_ptr<Scheduler> scheduler_;
    HttpServer http_;
    std::thread thread_;
};

inline httplib::Result post(httplib::Client& c, const std::string& path, const json& body, const httplib::Headers& h = {}) {
    return c.Post(path.c_str(), h, body.dump(), "application/json");
}

// POSTs and collects a streamed body; `keep_reading(received)` false closes the connection.
struct Streamed {
    int status = 0;
    std::string body;
    std::string content_type;
};
inline Streamed post_stream(httplib::Client& c, const std::string& path, const json& body,
                            const std::function<bool(const std::string&)>& keep_reading = nullptr) {
    Streamed out;
    httplib::Request req;
    req.method = "POST";
    req.path = path;
    req.body = body.dump();
    req.set_header("Content-Type", "application/json");
    req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
        out.body.append(data, n);
        return !keep_reading || keep_reading(out.body);
    };
    auto res = c.send(req);
    if (res) {
        out.status = res->status;
        out.content_type = res->get_header_value("Content-Type");
    }
    return out;
}

}  // namespace strata::server::test
