#include "server/engine_proxy.h"

#include <httplib.h>

#include <cctype>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "server/anthropic_schema.h"
#include "server/completion_routes.h"
#include "server/engine_connections.h"
#include "server/messages_routes.h"
#include "server/openai_schema.h"
#include "server/sse.h"

namespace strata::server {
namespace {

// One forwarded request: the engine's answer as it arrives, shared by the thread that reads it
// from the engine and the HTTP worker that writes it to the client.
struct Exchange {
    std::mutex mutex;
    std::condition_variable changed;
    bool has_headers = false, finished = false, failed = false;
    int status = 0;
    httplib::Headers headers;
    std::deque<std::string> chunks;
    std::string error;
    bool client_gone = false;  // the reader stops taking the engine's answer
};

bool iequals(const std::string& a, const char* b) {
    const size_t n = std::strlen(b);
    if (a.size() != n) return false;
    for (size_t i = 0; i < n; ++i) {
        if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
    }
    return true;
}

bool hop_by_hop(const std::string& name) {
    for (const char* h : {"Content-Length", "Transfer-Encoding", "Connection", "Keep-Alive", "Content-Encoding", "Host"}) {
        if (iequals(name, h)) return true;
    }
    return false;
}

ApiError engine_error(int status, std::string message) {
    return ApiError{status, std::move(message), "server_error", status == 503 ? "engine_unavailable" : "engine_failed", ""};
}

void reply_route_error(const httplib::Request& req, httplib::Response& res, const ApiError& e) {
    if (is_anthropic_path(req.path)) return reply_anthropic_error(res, e);
    reply_error(res, e);
}

// The last event of a stream the engine left unfinished, in the stream's own dialect.
std::string stream_error_event(const std::string& path, const std::string& message) {
    const ApiError e = engine_error(500, message);
    if (is_anthropic_path(path)) return sse_named_event(anthropic_error(e).to_json());
    if (path.rfind("/v1/responses", 0) == 0) {
        return sse_named_event({{"type", "error"}, {"code", e.code}, {"message", e.message}, {"param", nullptr}});
    }
    return sse_event(e.to_json());
}

// Reads the engine's answer into `x` (a thread of its own, so the client's side can stream it).
void read_from_engine(const std::shared_ptr<Exchange>& x, int port, httplib::Request upstream, std::chrono::seconds timeout,
                      const std::shared_ptr<EngineConnections>& connections) {
    httplib::Client client("127.0.0.1", port);
    connections->add(&client, [x] {
        std::lock_guard lock(x->mutex);
        if (x->finished) return;
        x->finished = x->failed = true;
        x->error = "the process ended";
        x->changed.notify_all();
    });
    client.set_connection_timeout(std::chrono::seconds(5));
    client.set_read_timeout(timeout);
    client.set_write_timeout(timeout);
    upstream.response_handler = [x](const httplib::Response& r) {
        std::lock_guard lock(x->mutex);
        x->status = r.status;
        for (const auto& [name, value] : r.headers) {
            if (!hop_by_hop(name)) x->headers.emplace(name, value);
        }
        x->has_headers = true;
        x->changed.notify_all();
        return true;
    };
    upstream.content_receiver = [x](const char* data, size_t n, uint64_t, uint64_t) {
        std::lock_guard lock(x->mutex);
        if (x->client_gone || x->finished) return false;  // gone, or failed by the supervisor
        x->chunks.emplace_back(data, n);
        x->changed.notify_all();
        return true;
    };
    httplib::Response response;
    httplib::Error error = httplib::Error::Success;
    const bool ok = client.send(upstream, response, error);
    connections->remove(&client);
    std::lock_guard lock(x->mutex);
    if (x->finished) return;  // failed already, when the supervisor saw the process end
    x->finished = true;
    if (!ok && !x->client_gone) {
        x->failed = true;
        x->error = httplib::to_string(error);
    }
    x->changed.notify_all();
}

}  // namespace

void reply_engine_unavailable(const httplib::Request& req, httplib::Response& res, const std::string& why) {
    res.set_header("Retry-After", "5");
    reply_route_error(req, res, engine_error(503, why));
}

void forward_to_engine(int port, const httplib::Request& req, httplib::Response& res, std::chrono::seconds timeout,
                       const std::shared_ptr<EngineConnections>& connections) {
    httplib::Request upstream;
    upstream.method = req.method;
    upstream.path = req.target.empty() ? req.path : req.target;
    upstream.body = req.body;
    for (const auto& [name, value] : req.headers) {
        // The engine answers in plain text: compression, if any, is the front's.
        // (cpp-httplib adds the peer's address as REMOTE_ADDR / LOCAL_ADDR "headers": not forwarded.)
        if (!hop_by_hop(name) && !iequals(name, "Accept-Encoding") && !iequals(name, "REMOTE_ADDR") &&
            !iequals(name, "REMOTE_PORT") && !iequals(name, "LOCAL_ADDR") && !iequals(name, "LOCAL_PORT")) {
            upstream.headers.emplace(name, value);
        }
    }
    auto x = std::make_shared<Exchange>();
    std::thread(read_from_engine, x, port, std::move(upstream), timeout, connections).detach();

    std::unique_lock lock(x->mutex);
    x->changed.wait(lock, [&] { return x->has_headers || x->finished; });
    if (!x->has_headers) {
        return reply_route_error(req, res, engine_error(500, fmt::format("the engine stopped before answering (its connection broke: {}); the supervisor is starting another: "
                                                                         "send the request again",
                                                                         x->error)));
    }
    res.status = x->status;
    std::string content_type = "application/json";
    for (const auto& [name, value] : x->headers) {
        if (iequals(name, "Content-Type")) content_type = value;
        else res.headers.emplace(name, value);
    }
    if (content_type.rfind("text/event-stream", 0) != 0) {
        // A whole answer: waited for, then sent with its length.
        x->changed.wait(lock, [&] { return x->finished; });
        if (x->failed) {
            res.headers.clear();
            return reply_route_error(req, res, engine_error(500, fmt::format("the engine stopped while answering (its connection broke: {}); the supervisor is starting another: "
                                                                             "send the request again",
                                                                             x->error)));
        }
        std::string body;
        for (const std::string& c : x->chunks) body += c;
        res.set_content(body, content_type);
        return;
    }
    const std::string path = req.path;
    res.set_chunked_content_provider(
        content_type,
        [x, path](size_t, httplib::DataSink& sink) {
            std::unique_lock l(x->mutex);
            x->changed.wait(l, [&] { return !x->chunks.empty() || x->finished; });
            while (!x->chunks.empty()) {
                const std::string chunk = std::move(x->chunks.front());
                x->chunks.pop_front();
                l.unlock();
                const bool written = sink.write(chunk.data(), chunk.size());
                l.lock();
                if (!written) {
                    x->client_gone = true;
                    return false;
                }
            }
            if (!x->finished) return true;
            if (x->failed) {
                const std::string event = stream_error_event(
                    path, fmt::format("the engine stopped in the middle of this answer (its connection broke: {}); the supervisor is starting another", x->error));
                l.unlock();
                sink.write(event.data(), event.size());
            }
            sink.done();
            return true;
        },
        [x](bool) {
            std::lock_guard l(x->mutex);
            x->client_gone = true;  // a reader still running stops at its next chunk
        });
}

}  // namespace strata::server
