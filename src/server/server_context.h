#pragma once
// What every route of the server reads: the options, the metrics, and the model with its
// scheduler once loading has finished. The HTTP server starts before the model is loaded, so
// /health can say "loading"; the loader then publishes the model with ready() (or the reason
// it failed with fail()).
//
//   ServerContext ctx(options);
//   HttpServer http(ctx);             // /health answers "loading"
//   ctx.ready(*model, scheduler);     // from the loading thread; API routes now serve

#include <atomic>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <mutex>
#include <string>

#include "runtime/engine.h"
#include "runtime/sampler.h"
#include "server/metrics.h"
#include "server/openai_schema.h"
#include "server/responses_store.h"
#include "server/scheduler.h"
#include "tokenizer/tool_calls/chat_format.h"

namespace strata::server {

struct ServerOptions {
    std::string host = "127.0.0.1";  // loopback unless the operator says otherwise
    int port = 8080;                 // 0: any free port (see HttpServer::port)
    std::string api_key;             // empty: no authentication
    std::string cors_origin;         // empty: no CORS headers (browsers may call only from our own page)
    size_t max_body_bytes = size_t(8) << 20;
    int http_threads = 0;            // 0: enough for every slot and queue place, plus a margin
    std::chrono::seconds timeout{600};  // per request, queue time included
    std::string model_id;            // the name GET /v1/models lists
    bool strict_model_name = false;  // refuse (404) a "model" other than model_id; else any name is served
    size_t stored_responses = 256;   // /v1/responses kept for previous_response_id and GET (LRU)
    SamplingParams default_sampling;
};

enum class ModelState { Loading, Ready, Failed };

class ServerContext {
public:
    explicit ServerContext(ServerOptions o) : options(std::move(o)), responses(options.stored_responses) {}

    // Publishes the loaded model (both must outlive the HTTP server).
    void ready(const Engine& model, Scheduler& scheduler) {
        model_ = &model;
        scheduler_ = &scheduler;
        chat_format_ = model.chat_template ? tool_calls::detect_chat_format(model.chat_template->source())
                                           : tool_calls::ChatFormat::Generic;
        created_ = static_cast<int64_t>(std::time(nullptr));
        state_.store(ModelState::Ready, std::memory_order_release);
    }
    void fail(std::string reason) {
        {
            std::lock_guard lock(mutex_);
            error_ = std::move(reason);
        }
        state_.store(ModelState::Failed, std::memory_order_release);
    }
    void begin_drain() { draining_.store(true); }

    ModelState state() const { return state_.load(std::memory_order_acquire); }
    bool draining() const { return draining_.load(); }
    std::string error() const {
        std::lock_guard lock(mutex_);
        return error_;
    }
    // Valid only once state() is Ready.
    const Engine& model() const { return *model_; }
    Scheduler& scheduler() const { return *scheduler_; }
    tool_calls::ChatFormat chat_format() const { return chat_format_; }
    int64_t created() const { return created_; }

    ModelNameRule model_name_rule() const { return {options.model_id, options.strict_model_name}; }

    const ServerOptions options;
    Metrics metrics;
    ResponseStore responses;

private:
    std::atomic<ModelState> state_{ModelState::Loading};
    std::atomic<bool> draining_{false};
    const Engine* model_ = nullptr;
    Scheduler* scheduler_ = nullptr;
    tool_calls::ChatFormat chat_format_ = tool_calls::ChatFormat::Generic;
    int64_t created_ = 0;
    mutable std::mutex mutex_;
    std::string error_;
};

}  // namespace strata::server
