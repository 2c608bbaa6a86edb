// run_load (loadgen_run.h): one thread per client, each with its own connection, sending its
// requests back to back; the wall time runs from the common start to the last response.
#include "cli/loadgen_run.h"

#include <fmt/format.h>
#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <thread>

namespace strata::cli {

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

httplib::Client make_client(const ServerAddress& a, const LoadgenOptions& o) {
    httplib::Client c(a.host, a.port);
    const auto timeout = std::chrono::duration<double>(o.timeout_seconds);
    c.set_read_timeout(std::chrono::duration_cast<std::chrono::microseconds>(timeout));
    c.set_write_timeout(std::chrono::seconds(30));
    c.set_connection_timeout(std::chrono::seconds(10));
    c.set_keep_alive(true);
    if (!o.api_key.empty()) c.set_bearer_token_auth(o.api_key);
    return c;
}

RequestOutcome one_request(httplib::Client& c, const LoadgenOptions& o, int client, int index) {
    // Each request's prompt differs a little, so a server with a prompt cache still does the work.
    json body = {{"model", o.model},
                 {"messages", json::array({{{"role", "user"}, {"content", fmt::format("{} (#{}.{})", o.prompt, client, index)}}})},
                 {"max_tokens", o.max_tokens},
                 {"temperature", 0}};
    if (o.ignore_eos) body["ignore_eos"] = true;
    RequestOutcome out;
    const auto start = Clock::now();
    auto res = c.Post("/v1/chat/completions", body.dump(), "application/json");
    out.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (!res) {
        out.error = fmt::format("transport error: {}", httplib::to_string(res.error()));
        return out;
    }
    if (res->status != 200) {
        out.error = fmt::format("HTTP {}: {}", res->status, res->body.substr(0, 200));
        return out;
    }
    const json reply = json::parse(res->body, nullptr, false);
    if (reply.is_discarded() || !reply.contains("usage") || !reply["usage"].contains("completion_tokens")) {
        out.error = "a 200 reply without usage.completion_tokens: " + res->body.substr(0, 200);
        return out;
    }
    out.completion_tokens = reply["usage"]["completion_tokens"].get<int64_t>();
    out.ok = true;
    return out;
}

}  // namespace

int64_t LoadgenResult::errors() const {
    return std::count_if(requests.begin(), requests.end(), [](const RequestOutcome& r) { return !r.ok; });
}

int64_t LoadgenResult::completion_tokens() const {
    int64_t n = 0;
    for (const RequestOutcome& r : requests) n += r.ok ? r.completion_tokens : 0;
    return n;
}

double LoadgenResult::aggregate_tokens_per_second() const {
    return wall_seconds > 0 ? static_cast<double>(completion_tokens()) / wall_seconds : 0.0;
}

double LoadgenResult::mean_request_tokens_per_second() const {
    double sum = 0.0;
    int n = 0;
    for (const RequestOutcome& r : requests) {
        if (r.ok && r.seconds > 0) sum += static_cast<double>(r.completion_tokens) / r.seconds, ++n;
    }
    return n ? sum / n : 0.0;
}

double LoadgenResult::latency_quantile(double q) const {
    std::vector<double> s;
    for (const RequestOutcome& r : requests) {
        if (r.ok) s.push_back(r.seconds);
    }
    if (s.empty()) return 0.0;
    std::sort(s.begin(), s.end());
    const size_t i = static_cast<size_t>(std::ceil(q * static_cast<double>(s.size()))) - (q > 0 ? 1 : 0);
    return s[std::min(i, s.size() - 1)];
}

Result<ServerAddress> parse_server_url(const std::string& url) {
    const std::string scheme = "http://";
    if (url.rfind(scheme, 0) != 0) return Status::error("--url {}: only http://host:port URLs are supported", url);
    std::string rest = url.substr(scheme.size());
    if (const size_t slash = rest.find('/'); slash != std::string::npos) rest.resize(slash);
    ServerAddress a;
    const size_t colon = rest.rfind(':');
    a.host = rest.substr(0, colon);
    if (colon != std::string::npos) {
        const std::string port = rest.substr(colon + 1);
        if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
            std::stoi(port) < 1 || std::stoi(port) > 65535) {
            return Status::error("--url {}: the port must be a number from 1 to 65535", url);
        }
        a.port = std::stoi(port);
    }
    if (a.host.empty()) return Status::error("--url {}: no host", url);
    return a;
}

// Polls GET /health until the server says "ready" (200). A server that answers 503 "loading" is
// waited for (with a line on stderr, once); one that reports a failed load or is draining, or an
// answer that is not Strata's, ends the wait: a server whose /health says nothing more is taken as
// ready when it answers 200, and as not ready otherwise.
namespace {

Status wait_until_ready(const ServerAddress& address, const LoadgenOptions& o) {
    httplib::Client probe = make_client(address, o);
    const auto deadline = Clock::now() + std::chrono::duration<double>(o.ready_timeout_seconds);
    bool said_waiting = false;
    while (true) {
        auto health = probe.Get("/health");
        if (!health) {
            return Status::error("cannot reach {} ({}): is the server running?", o.url, httplib::to_string(health.error()));
        }
        if (health->status == 200) return Status::ok();
        const json body = json::parse(health->body, nullptr, false);
        const std::string state = body.is_object() && body.contains("status") && body["status"].is_string()
                                      ? body["status"].get<std::string>()
                                      : "";
        if (state != "loading") {
            return Status::error("{} is not ready (GET /health: HTTP {} {}): start the load when it is", o.url,
                                 health->status, health->body);
        }
        if (Clock::now() >= deadline) {
            return Status::error("{} was still loading its model after {:.0f} s (--ready-timeout)", o.url,
                                 o.ready_timeout_seconds);
        }
        if (!said_waiting) {
            std::fprintf(stderr, "loadgen: %s is loading its model; waiting\n", o.url.c_str());
            said_waiting = true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
}

}  // namespace

Result<LoadgenResult> run_load(const LoadgenOptions& o) {
    STRATA_ASSIGN_OR_RETURN(const ServerAddress address, parse_server_url(o.url));
    if (o.clients < 1 || o.requests_per_client < 1 || o.max_tokens < 1) {
        return Status::error("loadgen needs at least one client, one request and one token");
    }
    STRATA_TRY(wait_until_ready(address, o));
    LoadgenOptions opts = o;
    if (opts.model.empty()) {
        httplib::Client probe = make_client(address, o);
        auto models = probe.Get("/v1/models");
        const json list = models && models->status == 200 ? json::parse(models->body, nullptr, false) : json();
        if (list.is_object() && list.contains("data") && list["data"].is_array() && !list["data"].empty() &&
            list["data"][0].contains("id") && list["data"][0]["id"].is_string()) {
            opts.model = list["data"][0]["id"].get<std::string>();
        } else {
            opts.model = "default";  // a server that lists nothing gets a name; its errors will say more
        }
    }
    LoadgenResult result;
    result.clients = o.clients;
    std::vector<std::vector<RequestOutcome>> per_client(static_cast<size_t>(o.clients));
    const auto start = Clock::now();
    std::vector<std::thread> threads;
    for (int c = 0; c < o.clients; ++c) {
        threads.emplace_back([&, c] {
            httplib::Client client = make_client(address, opts);
            for (int r = 0; r < o.requests_per_client; ++r) per_client[static_cast<size_t>(c)].push_back(one_request(client, opts, c, r));
        });
    }
    for (std::thread& t : threads) t.join();
    result.wall_seconds = std::chrono::duration<double>(Clock::now() - start).count();
    for (auto& v : per_client) result.requests.insert(result.requests.end(), v.begin(), v.end());
    return result;
}

}  // namespace strata::cli
