#include "server/http_server.h"

#include <httplib.h>

#include <fmt/format.h>

#include "server/completion_routes.h"
#include "server/messages_routes.h"
#include "server/responses_routes.h"
#include "server/web_page.h"

namespace strata::server {

bool constant_time_equals(std::string_view given, std::string_view secret) {
    // Every byte of the secret is compared whatever the input; the length difference is folded
    // into the result instead of returning early.
    unsigned char diff = given.size() == secret.size() ? 0 : 1;
    for (size_t i = 0; i < secret.size(); ++i) {
        const char g = given.empty() ? '\0' : given[i % given.size()];
        diff |= static_cast<unsigned char>(g ^ secret[i]);
    }
    return diff == 0 && !secret.empty();
}

namespace {

// Metric labels are routes we serve; anything else is counted as "other", so a scan of random
// paths cannot grow the metrics without bound.
std::string route_label(const std::string& path) {
    for (const char* known : {"/", "/health", "/metrics", "/v1/models", "/v1/chat/completions", "/v1/completions", "/v1/messages",
                              "/v1/messages/count_tokens", "/v1/responses", "/v1/responses/input_tokens"}) {
        if (path == known) return known;
    }
    // One label for every stored response's id.
    if (path.rfind("/v1/responses/", 0) == 0 && path.find('/', 14) == std::string::npos) return "/v1/responses/{id}";
    return "other";
}

constexpr const char* kRoutes = "/v1/chat/completions, /v1/completions, /v1/responses, /v1/responses/{id}, /v1/responses/input_tokens, "
                                "/v1/messages, /v1/messages/count_tokens, /v1/models, /health, /metrics";

// The key as OpenAI clients send it (Authorization: Bearer KEY) or as Anthropic's do (x-api-key: KEY).
bool has_api_key(const httplib::Request& req, const std::string& key) {
    if (req.has_header("x-api-key") && constant_time_equals(req.get_header_value("x-api-key"), key)) return true;
    const std::string auth = req.get_header_value("Authorization");
    const std::string_view prefix = "Bearer ";
    return auth.size() > prefix.size() && auth.compare(0, prefix.size(), prefix) == 0 &&
           constant_time_equals(std::string_view(auth).substr(prefix.size()), key);
}

// Errors of the routes' own API: Anthropic's shape under /v1/messages, OpenAI's elsewhere.
void reply_api_error(const httplib::Request& req, httplib::Response& res, const ApiError& e) {
    if (is_anthropic_path(req.path)) return reply_anthropic_error(res, e);
    reply_error(res, e);
}

bool public_route(const httplib::Request& req) {
    // The page is static text with no data; the API calls it makes carry the key the user enters.
    return req.path == "/health" || (req.path == "/" && (req.method == "GET" || req.method == "HEAD"));
}

}  // namespace

HttpServer::HttpServer(ServerContext& ctx) : ctx_(ctx), server_(std::make_unique<httplib::Server>()) {
    const ServerOptions& o = ctx_.options;
    // A streaming request holds its thread for its whole generation, so the pool must cover every
    // slot and queue place (or the 503 "queue full" answer could never be given), plus keep-alive
    // connections and the cheap routes.
    const int threads = o.http_threads > 0 ? o.http_threads : 64;
    server_->new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
    // httplib's default socket options set SO_REUSEPORT on Linux: a second server started on a
    // port in use would then listen beside the first and take half its connections (found running
    // two by mistake under Codex CLI). SO_REUSEADDR alone still allows a restart while the old
    // connections linger in TIME_WAIT, and the second bind fails as it should.
#ifndef _WIN32
    server_->set_socket_options([](socket_t sock) {
        int yes = 1;
        setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    });
#endif
    server_->set_payload_max_length(o.max_body_bytes);
    server_->set_read_timeout(30, 0);
    server_->set_write_timeout(30, 0);
    server_->set_keep_alive_timeout(5);
    install_routes();
}

HttpServer::~HttpServer() { stop(); }

Status HttpServer::bind() {
    const ServerOptions& o = ctx_.options;
    if (o.port == 0) {
        port_ = server_->bind_to_any_port(o.host);
    } else {
        port_ = server_->bind_to_port(o.host, o.port) ? o.port : -1;
    }
    if (port_ <= 0) {
        return Status::error("cannot listen on {}:{}: the port is in use or the address is not this machine's (choose another --port or --host)",
                             o.host, o.port);
    }
    return Status::ok();
}

void HttpServer::run() { server_->listen_after_bind(); }

void HttpServer::stop() {
    if (server_->is_running()) server_->stop();
}

void HttpServer::install_routes() {
    httplib::Server& s = *server_;
    ServerContext& ctx = ctx_;

    s.set_pre_routing_handler([&ctx](const httplib::Request& req, httplib::Response& res) {
        const ServerOptions& o = ctx.options;
        if (!o.cors_origin.empty()) {
            res.set_header("Access-Control-Allow-Origin", o.cors_origin);
            res.set_header("Vary", "Origin");
            if (req.method == "OPTIONS") {  // preflight: answered here, before authentication
                res.set_header("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS");
                res.set_header("Access-Control-Allow-Headers", "Authorization, Content-Type, x-api-key, anthropic-version, anthropic-beta");
                res.set_header("Access-Control-Max-Age", "600");
                res.status = 204;
                return httplib::Server::HandlerResponse::Handled;
            }
        }
        if (!o.api_key.empty() && !public_route(req) && !has_api_key(req, o.api_key)) {
            reply_api_error(req, res, ApiError{401, "invalid or missing API key: send the header 'Authorization: Bearer <key>' or 'x-api-key: <key>'",
                                               "authentication_error", "invalid_api_key", ""});
            res.set_header("WWW-Authenticate", "Bearer");
            // The refusal comes before the body is read; what is left of it would be taken for
            // the next request on a kept-alive connection (a client that retries on the same
            // connection got 414 for its body's bytes), so the client must open a new one.
            res.set_header("Connection", "close");
            return httplib::Server::HandlerResponse::Handled;
        }
        return httplib::Server::HandlerResponse::Unhandled;
    });

    s.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
        if (!res.body.empty()) return;  // a route's own error body
        ApiError e{res.status, "", "invalid_request_error", "", ""};
        if (res.status == 404) {
            e.message = fmt::format("no route {} {}: this server serves {}", req.method, req.path, kRoutes);
            e.code = "not_found";
        } else if (res.status == 413) {
            e.message = "the request body is larger than this server accepts (see --max-body)";
            e.code = "payload_too_large";
        } else {
            e.message = fmt::format("HTTP {}", res.status);
        }
        reply_api_error(req, res, e);
    });

    s.set_exception_handler([](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
        std::string what = "unknown error";
        try {
            std::rethrow_exception(ep);
        } catch (const std::exception& e) {
            what = e.what();
        } catch (...) {
        }
        reply_api_error(req, res, ApiError{500, "internal error: " + what, "server_error", "internal_error", ""});
    });

    // Counted as the response is about to be written, not after (the logger's moment): a client
    // that has its answer must find it in /metrics, as the e2e test does at once.
    s.set_post_routing_handler([&ctx](const httplib::Request& req, httplib::Response& res) {
        ctx.metrics.count_request(route_label(req.path), res.status);
    });

    s.Get("/health", [&ctx](const httplib::Request&, httplib::Response& res) {
        nlohmann::json body;
        switch (ctx.state()) {
            case ModelState::Loading:
                res.status = 503;
                body = {{"status", "loading"}};
                break;
            case ModelState::Failed:
                res.status = 503;
                body = {{"status", "error"}, {"error", ctx.error()}};
                break;
            case ModelState::Ready: {
                const SchedulerStats st = ctx.scheduler().stats();
                res.status = ctx.draining() ? 503 : 200;
                body = {{"status", ctx.draining() ? "draining" : "ready"},
                        {"slots_idle", st.slots - st.active},
                        {"slots_busy", st.active},
                        {"queued", st.queued},
                        {"step_seconds", ctx.scheduler().running_step_seconds()}};
                break;
            }
        }
        res.set_content(body.dump(), "application/json");
    });

    s.Get("/metrics", [&ctx](const httplib::Request&, httplib::Response& res) {
        const SchedulerStats st = ctx.state() == ModelState::Ready ? ctx.scheduler().stats() : SchedulerStats{};
        res.set_content(ctx.metrics.render(st), "text/plain; version=0.0.4");
    });

    auto models = [&ctx](const httplib::Request&, httplib::Response& res) {
        const int64_t n_ctx = ctx.state() == ModelState::Ready ? ctx.scheduler().options().n_ctx : 0;
        res.set_content(models_list(ctx.options.model_id, ctx.created(), n_ctx).dump(), "application/json");
    };
    s.Get("/v1/models", models);
    s.Get("/models", models);

    s.Post("/v1/chat/completions", [&ctx](const httplib::Request& req, httplib::Response& res) {
        handle_generation(ctx, Endpoint::Chat, req, res);
    });
    s.Post("/v1/completions", [&ctx](const httplib::Request& req, httplib::Response& res) {
        handle_generation(ctx, Endpoint::Completion, req, res);
    });
    s.Post("/v1/messages", [&ctx](const httplib::Request& req, httplib::Response& res) { handle_messages(ctx, req, res); });
    s.Post("/v1/messages/count_tokens", [&ctx](const httplib::Request& req, httplib::Response& res) {
        handle_count_tokens(ctx, req, res);
    });

    s.Post("/v1/responses", [&ctx](const httplib::Request& req, httplib::Response& res) { handle_responses_create(ctx, req, res); });
    s.Post("/v1/responses/input_tokens", [&ctx](const httplib::Request& req, httplib::Response& res) {
        handle_responses_input_tokens(ctx, req, res);
    });
    s.Get(R"(/v1/responses/([^/]+))", [&ctx](const httplib::Request& req, httplib::Response& res) { handle_responses_get(ctx, req, res); });
    s.Delete(R"(/v1/responses/([^/]+))", [&ctx](const httplib::Request& req, httplib::Response& res) {
        handle_responses_delete(ctx, req, res);
    });

    s.Get("/", [](const httplib::Request&, httplib::Response& res) {
        res.set_header("Content-Security-Policy", "default-src 'self'; style-src 'unsafe-inline'; script-src 'unsafe-inline'");
        res.set_header("X-Content-Type-Options", "nosniff");
        res.set_content(std::string(web_page_html()), "text/html; charset=utf-8");
    });
}

}  // namespace strata::server
