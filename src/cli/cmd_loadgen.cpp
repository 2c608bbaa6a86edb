// `strata loadgen [--url http://127.0.0.1:8080] [--clients 1,4,16] [--requests-per-client N]
//                 [--max-tokens N] [--prompt TEXT] [--api-key-file F] [--json]`: measures an
// OpenAI-compatible server (`strata serve`, or another for comparison) under concurrent users:
// for each client count, every client sends its chat completions back to back, and the table
// gives aggregate tokens per second, per-request speed, latency quantiles and errors. A level
// with errors makes the exit status 1, after all levels ran.
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "cli/command.h"
#include "cli/loadgen_run.h"
#include "core/file.h"

namespace strata::cli {
namespace {

struct LoadgenCliOptions {
    LoadgenOptions run;
    std::vector<int> clients = {1, 4, 16};
    std::string api_key_file;
    bool json = false;
};

nlohmann::json level_json(const LoadgenResult& r, const LoadgenOptions& o) {
    return {{"clients", r.clients},
            {"requests", r.requests.size()},
            {"errors", r.errors()},
            {"max_tokens", o.max_tokens},
            {"completion_tokens", r.completion_tokens()},
            {"wall_seconds", r.wall_seconds},
            {"aggregate_tokens_per_second", r.aggregate_tokens_per_second()},
            {"mean_request_tokens_per_second", r.mean_request_tokens_per_second()},
            {"latency_p50_seconds", r.latency_quantile(0.5)},
            {"latency_p95_seconds", r.latency_quantile(0.95)}};
}

int run_loadgen(LoadgenCliOptions& o) {
    if (!o.api_key_file.empty()) {
        auto key = read_file_to_string(o.api_key_file);
        if (!key) return report_failure("loadgen", key.status().message());
        o.run.api_key = *key;
        while (!o.run.api_key.empty() && (o.run.api_key.back() == '\n' || o.run.api_key.back() == '\r')) o.run.api_key.pop_back();
    }
    nlohmann::json levels = nlohmann::json::array();
    bool any_errors = false;
    if (!o.json) {
        fmt::print("{} · {} requests per client · max_tokens {}\n", o.run.url, o.run.requests_per_client, o.run.max_tokens);
        fmt::print("| clients | requests | errors | tokens | wall s | aggregate tok/s | per request tok/s | p50 s | p95 s |\n");
        fmt::print("|--------:|---------:|-------:|-------:|-------:|----------------:|------------------:|------:|------:|\n");
    }
    for (int c : o.clients) {
        o.run.clients = c;
        auto r = run_load(o.run);
        if (!r) return report_failure("loadgen", r.status().message());
        any_errors = any_errors || r->errors() > 0;
        if (o.json) {
            levels.push_back(level_json(*r, o.run));
        } else {
            fmt::print("| {:7} | {:8} | {:6} | {:6} | {:6.1f} | {:15.1f} | {:17.1f} | {:5.2f} | {:5.2f} |\n", c,
                       r->requests.size(), r->errors(), r->completion_tokens(), r->wall_seconds,
                       r->aggregate_tokens_per_second(), r->mean_request_tokens_per_second(), r->latency_quantile(0.5),
                       r->latency_quantile(0.95));
            std::fflush(stdout);
        }
        for (const RequestOutcome& q : r->requests) {
            if (!q.ok) {
                fmt::print(stderr, "loadgen: a request with {} clients failed: {}\n", c, q.error);
                break;  // one example per level is enough
            }
        }
    }
    if (o.json) fmt::print("{}\n", nlohmann::json{{"url", o.run.url}, {"levels", levels}}.dump(2));
    return any_errors ? 1 : 0;
}

CommandRegistration registration("loadgen", "Measure an OpenAI-compatible server under concurrent clients",
                                  [](CLI::App& app) {
    auto o = std::make_shared<LoadgenCliOptions>();
    app.add_option("--url", o->run.url, "Server base URL (http://host:port)")->capture_default_str();
    app.add_option("--clients", o->clients, "Client counts to run, one level each (e.g. 1,4,16)")
        ->delimiter(',')->capture_default_str()->check(CLI::Range(1, 1024));
    app.add_option("--requests-per-client", o->run.requests_per_client, "Chat completions each client sends in a row")
        ->capture_default_str()->check(CLI::Range(1, 1 << 20));
    app.add_option("--max-tokens", o->run.max_tokens, "max_tokens of each request")
        ->capture_default_str()->check(CLI::Range(1, 1 << 20));
    app.add_option("--prompt", o->run.prompt, "User message (a request number is appended to each)");
    app.add_option("--model", o->run.model, "The requests' model field (default: the first the server lists)");
    app.add_option("--api-key-file", o->api_key_file, "File holding the server's API key (sent as a bearer token)");
    app.add_option("--timeout", o->run.timeout_seconds, "Seconds to wait for one response")
        ->capture_default_str()->check(CLI::Range(1.0, 86400.0));
    app.add_option("--ready-timeout", o->run.ready_timeout_seconds,
                   "Seconds to wait for a server still loading its model before the first level")
        ->capture_default_str()
        ->check(CLI::NonNegativeNumber);
    app.add_flag("--stop-at-eos", [o](int64_t) { o->run.ignore_eos = false; },
                 "Let generation stop at end of text (default: every request generates max_tokens)");
    app.add_flag("--json", o->json, "Print the levels as JSON");
    return [o] { return run_loadgen(*o); };
});

}  // namespace
}  // namespace strata::cli
