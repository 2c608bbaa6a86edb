// `strata serve -m MODEL.gguf [--host H] [--port P] [--api-key KEY | --api-key-file F] [--slots N]
// [--ctx-size N] [--cors ORIGIN] [--max-queue N] [--timeout S] [--checkpoint-ram MIB] [-t threads]`: the OpenAI- and
// Anthropic-compatible server (server/). It listens at once, so /health can say "loading" while the model loads;
// SIGINT/SIGTERM stop new requests, let the ones in flight finish, and exit. By default the engine runs in a
// child process under a supervisor (server/supervisor.h) that restarts it after a crash or a hang;
// --no-supervise runs it in this process.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <thread>

#include "cli/builtin_model.h"
#include "cli/command.h"
#include "cli/serve_hardware_metrics.h"
#include "cli/engine_flags.h"
#include "cli/sampling_flags.h"
#include "cli/speculation_flags.h"
#include "cli/stop_signals.h"
#include "core/file.h"
#include "runtime/engine.h"
#include "server/http_server.h"
#include "server/scheduler.h"
#include "server/engine_process.h"
#include "server/supervisor.h"

namespace strata::cli {
namespace {

struct ServeOptions {
    std::string model, chat_template_file, alias;
    bool strict_model_name = false;
    std::string host = "127.0.0.1";
    int port = 8080;
    std::string api_key, api_key_file, cors;
    int slots = 1;
    int64_t n_ctx = 4096;
    int64_t n_batch = 512;
    size_t max_queue = 64;
    int timeout_seconds = 600;
    int drain_seconds = 60;
    size_t max_body_mb = 8;
    size_t stored_responses = 256;
    int64_t checkpoint_mib = 4096;
    int threads = 0;
    bool no_supervise = false;
    int watchdog_seconds = 300;
    int engine_report_fd = -1;  // set by the supervisor for its engine child: where to report the port
    int engine_stop_fd = -1;    // Windows: the pipe through which its supervisor asks it to stop
    SamplingFlags sampling;
    SpeculationFlags speculation;  // the default of requests that do not set "speculative"
    DeviceFlags device;  // the server's default stays the CPU (set at registration); --device auto|gpu opts in
    TierFlags tiers;
};

bool is_loopback(const std::string& host) {
    return host == "127.0.0.1" || host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

std::string trim(std::string s) {
    const auto not_space = [](unsigned char c) { return !std::isspace(c); };
    s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
    s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
    return s;
}

// The supervisor's side: the port, and an engine child running these same arguments.
int run_supervisor(const ServeOptions& o) {
    server::SupervisorOptions so;
    so.engine_argv = process_arguments();
    so.host = o.host;
    so.port = o.port;
    so.watchdog = std::chrono::seconds(o.watchdog_seconds);
    so.request_timeout = std::chrono::seconds(o.timeout_seconds);
    so.drain = std::chrono::seconds(o.drain_seconds);
    so.max_body_bytes = o.max_body_mb << 20;
    so.http_threads = o.slots + static_cast<int>(o.max_queue) + 16;
    StopSignals stop;
    server::Supervisor supervisor(so);
    if (Status s = supervisor.bind(); !s) return report_failure("serve", s.message());
    fmt::print(stderr, "strata serve: listening on http://{}:{} (the engine starts in a supervised process)\n", o.host, supervisor.port());
    supervisor.start();
    stop.wait();
    fmt::print(stderr, "strata serve: stopping: the engine finishes the requests in progress (up to {} s)\n", o.drain_seconds);
    std::thread([&stop] {
        const int code = stop.wait();
        fmt::print(stderr, "strata serve: second signal, exiting without waiting\n");
        std::_Exit(code);  // the engine follows: it dies with its parent
    }).detach();
    supervisor.stop();
    fmt::print(stderr, "strata serve: stopped\n");
    return 0;
}

int run_serve(ServeOptions o) {
    const bool engine_child = o.engine_report_fd >= 0;
    // The supervisor has said which model it serves; its engine finds the same one quietly.
    auto model_path = engine_child && o.model.empty() ? find_builtin_model() : model_or_builtin(o.model, "serve");
    if (!model_path) return report_failure("serve", model_path.status().message());
    o.model = *model_path;
    if (engine_child) {
        // Only the supervisor reaches this port; it forwards every request with the client's key.
        o.host = "127.0.0.1";
        o.port = 0;
    }
    server::ServerOptions so;
    so.host = o.host;
    so.port = o.port;
    so.cors_origin = o.cors;
    so.max_body_bytes = o.max_body_mb << 20;
    so.stored_responses = o.stored_responses;
    so.timeout = std::chrono::seconds(o.timeout_seconds);
    so.model_id = o.alias.empty() ? std::filesystem::path(o.model).stem().string() : o.alias;
    so.strict_model_name = o.strict_model_name;
    so.default_sampling = o.sampling.params();
    so.http_threads = o.slots + static_cast<int>(o.max_queue) + 16;
    if (Status s = so.default_sampling.validate(); !s) return report_failure("serve", s.message());
    auto speculation = o.speculation.options();
    if (!speculation) return report_failure("serve", speculation.status().message());
    so.api_key = o.api_key;
    if (!o.api_key_file.empty()) {
        auto key = read_file_to_string(o.api_key_file);
        if (!key) return report_failure("serve", key.status().message());
        so.api_key = trim(*key);
        if (so.api_key.empty()) return report_failure("serve", fmt::format("--api-key-file {}: the file is empty (write the key in it)", o.api_key_file));
    }
    if (!is_loopback(o.host) && so.api_key.empty()) {
        fmt::print(stderr, "strata serve: warning: listening on {} without --api-key: anyone who can reach this address can use the server\n", o.host);
    }
    std::string template_text;
    if (!o.chat_template_file.empty()) {
        auto t = read_file_to_string(o.chat_template_file);
        if (!t) return report_failure("serve", t.status().message());
        template_text = *t;
    }

    // The flags are checked above, once, where a mistake can still stop the command: an engine that
    // exited on one would only be restarted. Everything from here on is the engine's.
    if (!engine_child && !o.no_supervise) return run_supervisor(o);

    // Where the model runs, first: choosing the GPU may run the process again with only that card
    // visible (cli/self_rerun.h), which must happen before a port is bound and announced.
    auto request = engine_request(o.model, o.device, o.tiers, o.n_ctx * o.slots, o.n_batch);
    if (request) request->chat_template = template_text;

    StopSignals stop;
    if (engine_child && o.engine_stop_fd >= 0) server::EngineProcess::watch_stop_pipe(o.engine_stop_fd, [&stop] { stop.request(); });

    server::ServerContext ctx(so);
    server::HttpServer http(ctx);
    if (Status s = http.bind(); !s) return report_failure("serve", s.message());
    if (engine_child) {
        if (Status s = server::EngineProcess::report_port(o.engine_report_fd, http.port()); !s) return report_failure("serve", s.message());
        fmt::print(stderr, "strata serve: engine (pid {}) loading model {}\n", server::EngineProcess::own_pid(), so.model_id);
    } else {
        fmt::print(stderr, "strata serve: listening on http://{}:{} (model {} loading)\n", o.host, http.port(), so.model_id);
    }
    std::thread http_thread([&] { http.run(); });

    std::mutex mutex;
    std::condition_variable cv;
    bool stop_requested = false;
    std::thread signal_thread([&] {
        int code = stop.wait();
        if (ctx.state() == server::ModelState::Loading) std::_Exit(code);  // nothing to drain yet
        {
            std::lock_guard lock(mutex);
            stop_requested = true;
        }
        cv.notify_all();
        code = stop.wait();  // a second signal: stop waiting for the drain
        fmt::print(stderr, "strata serve: second signal, exiting without waiting\n");
        std::_Exit(code);
    });
    signal_thread.detach();

    std::unique_ptr<Engine> model;
    std::unique_ptr<ThreadPool> pool;
    std::unique_ptr<server::Scheduler> scheduler;
    // The memory plan (and, when the experts do not fit in VRAM, the expert tiers) is decided
    // while the port already answers /health with "loading".
    Result<std::unique_ptr<Engine>> loaded =
        request ? Engine::open(std::move(*request)) : Result<std::unique_ptr<Engine>>(request.status());
    if (loaded) {
        const Engine& e = **loaded;
        ctx.metrics.set_extra(hardware_metrics(&e.placement, e.model->device_name() != "cpu"));
        fmt::print(stderr, "strata serve: model on {}\n", e.model->device_name());
        if (e.placement.worth_describing()) fmt::print(stderr, "{}\n", e.placement.describe());
    }
    if (!loaded) {
        ctx.fail(loaded.status().message());
        fmt::print(stderr, "strata serve: the model failed to load: {}\n(/health reports the error; stop with Ctrl-C)\n",
                   loaded.status().message());
    } else {
        model = std::move(*loaded);
        pool = std::make_unique<ThreadPool>(ThreadPool::Options{.threads = cpu_pool_threads(o.threads, model->placement)});
        scheduler = std::make_unique<server::Scheduler>(
            *model->model, *model->tokenizer, *pool,
            server::SchedulerOptions{.n_slots = o.slots,
                                     .n_ctx = o.n_ctx,
                                     .n_batch = o.n_batch,
                                     .max_queue = o.max_queue,
                                     .checkpoint_bytes = static_cast<uint64_t>(o.checkpoint_mib) << 20,
                                     .speculation = *speculation},
            &ctx.metrics);
        ctx.ready(*model, *scheduler);
        fmt::print(stderr, "strata serve: ready in {:.2f} s: {} slots of {} tokens, {} threads{}\n", model->load_seconds, o.slots,
                   o.n_ctx, pool->size(), model->chat_template ? "" : " (no chat template: /v1/chat/completions and /v1/messages need --chat-template)");
    }

    {
        std::unique_lock lock(mutex);
        cv.wait(lock, [&] { return stop_requested; });
    }
    fmt::print(stderr, "strata serve: stopping: finishing the requests in progress (up to {} s)\n", o.drain_seconds);
    ctx.begin_drain();
    if (scheduler) {
        scheduler->begin_drain();
        if (!scheduler->wait_idle(std::chrono::seconds(o.drain_seconds))) {
            fmt::print(stderr, "strata serve: requests still running after {} s are cancelled\n", o.drain_seconds);
        }
    }
    http.stop();
    http_thread.join();
    scheduler.reset();  // cancels whatever is left, before the model it runs on goes away
    fmt::print(stderr, "strata serve: stopped\n");
    return 0;
}

CommandRegistration registration("serve", "OpenAI- and Anthropic-compatible HTTP server with a chat page", [](CLI::App& app) {
    auto o = std::make_shared<ServeOptions>();
    app.add_option("-m,--model", o->model, "GGUF model file (default: the built-in model, models/strata-kjv-moe.gguf)");
    app.add_option("--alias", o->alias, "Model name GET /v1/models lists (default: the file name without .gguf)");
    app.add_flag("--strict-model-name", o->strict_model_name, "Refuse (404) a request whose \"model\" is not the served name; by default any name is served and echoed");
    app.add_option("--chat-template", o->chat_template_file, "Jinja file to use instead of the model's template");
    app.add_option("--host", o->host, "Address to listen on")->capture_default_str();
    app.add_option("--port", o->port, "Port (0: any free port)")->capture_default_str()->check(CLI::Range(0, 65535));
    auto* key = app.add_option("--api-key", o->api_key, "Require 'Authorization: Bearer KEY' (prefer --api-key-file: argv is visible to other users)");
    app.add_option("--api-key-file", o->api_key_file, "Read the API key from a file")->excludes(key);
    app.add_option("--slots", o->slots, "Requests served at once, each with its own KV cache")->capture_default_str()->check(CLI::Range(1, 256));
    app.add_option("-c,--ctx-size", o->n_ctx, "Context size per slot in tokens")->capture_default_str()->check(CLI::Range(16, 1 << 24));
    app.add_option("-b,--batch-size", o->n_batch, "Prompt tokens per step")->capture_default_str()->check(CLI::Range(1, 1 << 16));
    app.add_option("--cors", o->cors, "Allow browsers on this origin (e.g. http://localhost:3000, or *) to call the API");
    app.add_option("--max-queue", o->max_queue, "Requests waiting for a slot before new ones get 503")->capture_default_str()->check(CLI::Range(0, 4096));
    app.add_option("--timeout", o->timeout_seconds, "Seconds a request may take, queue time included")->capture_default_str()->check(CLI::Range(1, 86400));
    app.add_option("--drain-timeout", o->drain_seconds, "Seconds to let requests finish on SIGINT/SIGTERM")->capture_default_str()->check(CLI::Range(0, 3600));
    app.add_option("--max-body", o->max_body_mb, "Largest request body in MiB")->capture_default_str()->check(CLI::Range(1, 1024));
    app.add_option("--stored-responses", o->stored_responses, "/v1/responses kept for previous_response_id and GET (least recently used dropped; 0: none)")
        ->capture_default_str()->check(CLI::Range(0, 1 << 20));
    app.add_option("--checkpoint-ram", o->checkpoint_mib,
                   "MiB of RAM for turn checkpoints of hybrid models (the recurrent state at turn starts and reply ends, so "
                   "the next turn resumes instead of re-reading its prompt; least recently used dropped; 0: off)")
        ->capture_default_str()->check(CLI::Range(int64_t{0}, int64_t{1} << 24));
    add_threads_option(app, o->threads);
    app.add_flag("--no-supervise", o->no_supervise,
                 "Run the engine in this process (by default a supervisor runs it in a child process and starts a new one "
                 "after a crash or a hang; the requests in flight then get an error)");
    app.add_option("--watchdog", o->watchdog_seconds,
                   "Seconds an engine step may run, or the engine go without answering, before the supervisor kills and "
                   "restarts it")
        ->capture_default_str()
        ->check(CLI::Range(1, 86400));
    app.add_option("--engine-report-fd", o->engine_report_fd)->group("");  // the supervisor's engine child: internal
    app.add_option("--engine-stop-fd", o->engine_stop_fd)->group("");      // the same, Windows: internal
    o->sampling.add_to(app, SamplingFlags::Use::RequestDefaults);
    o->speculation.add_to(app);
    o->device.device = "cpu";
    o->device.add_to(app);
    o->tiers.add_to(app);
    return [o] { return run_serve(*o); };
});

}  // namespace
}  // namespace strata::cli
