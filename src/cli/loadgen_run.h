#pragma once
// The load generator behind `strata loadgen`: C concurrent clients, each sending R chat
// completions in a row to an OpenAI-compatible server, and what came back — tokens, latencies,
// errors — so the throughput of `strata serve` (or any such server) under 1, 4, 16 users can be
// measured the same way everywhere.
//
//   LoadgenOptions o{.url = "http://127.0.0.1:8080", .clients = 4, .requests_per_client = 8};
//   Result<LoadgenResult> r = run_load(o);   // an unreachable server is an error, not a result
//   fmt::print("{:.1f} tok/s\n", r->aggregate_tokens_per_second());

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace strata::cli {

struct LoadgenOptions {
    std::string url = "http://127.0.0.1:8080";  // scheme://host:port (http only)
    std::string api_key;                        // sent as a bearer token when set
    std::string model;  // empty: the first model GET /v1/models lists
    std::string prompt = "Write a long story about a lighthouse keeper.";
    int clients = 1;
    int requests_per_client = 4;
    int max_tokens = 64;
    bool ignore_eos = true;  // Strata's extension: every request generates max_tokens
    double timeout_seconds = 600;
    // How long to wait for a server still loading its model (GET /health 503 "loading"): a load
    // level against a loading server would only measure refusals.
    double ready_timeout_seconds = 600;
};

struct RequestOutcome {
    bool ok = false;
    int64_t completion_tokens = 0;
    double seconds = 0.0;
    std::string error;  // when !ok: HTTP status and body, or the transport error
};

struct LoadgenResult {
    int clients = 0;
    double wall_seconds = 0.0;
    std::vector<RequestOutcome> requests;
    int64_t errors() const;
    int64_t completion_tokens() const;
    double aggregate_tokens_per_second() const;     // Σ tokens / wall time
    double mean_request_tokens_per_second() const;  // mean over the successful requests
    double latency_quantile(double q) const;        // over the successful requests, seconds
};

// Parses "http://host:port" (port required unless 80). Errors name what is wrong.
struct ServerAddress {
    std::string host;
    int port = 80;
};
Result<ServerAddress> parse_server_url(const std::string& url);

// Runs one load level, once GET /health says the server is ready (waiting while it loads its
// model). Fails only when the server cannot be reached, reports a failed load or is draining, or
// is still loading after options.ready_timeout_seconds; requests that fail during the run are
// counted in the result.
Result<LoadgenResult> run_load(const LoadgenOptions& options);

}  // namespace strata::cli
