#pragma once
// The HTTP side of `strata serve`: cpp-httplib with our routes, limits and checks.
//   - binds the configured host (127.0.0.1 by default) and port (0: any free one);
//   - every route but GET /health and the static page at / needs the API key, when one is set, as
//     "Authorization: Bearer KEY" or "x-api-key: KEY" (Anthropic's clients), compared in constant time;
//   - bodies over max_body_bytes are refused with 413, headers over cpp-httplib's 8 KiB line
//     limit are refused by the library;
//   - CORS headers only when an origin was configured;
//   - errors, including unknown routes, in the OpenAI shape; under /v1/messages in Anthropic's.
//
//   ServerContext ctx(options);
//   HttpServer http(ctx);
//   STRATA_TRY(http.bind());
//   std::thread t([&] { http.run(); });    // until http.stop()

#include <memory>
#include <string>
#include <string_view>

#include "core/status.h"
#include "server/server_context.h"

namespace httplib {
class Server;
}

namespace strata::server {

class HttpServer {
public:
    explicit HttpServer(ServerContext& ctx);
    ~HttpServer();
    HttpServer(const HttpServer&) = delete;
    HttpServer& operator=(const HttpServer&) = delete;

    Status bind();
    int port() const { return port_; }
    // Serves until stop(); returns after the requests in progress have been answered.
    void run();
    void stop();

private:
    void install_routes();

    ServerContext& ctx_;
    std::unique_ptr<httplib::Server> server_;
    int port_ = -1;
};

// Equal strings in a time that depends only on the length of `secret`, so that response times do
// not reveal how much of a guessed key was right.
bool constant_time_equals(std::string_view given, std::string_view secret);

}  // namespace strata::server
