#pragma once
// The supervisor's half of a request (server/supervisor.h): forwards it to the engine process on
// its loopback port and passes the answer back, an event stream chunk by chunk as it comes. When
// the engine ends (crash, kill, watchdog) before the answer is complete, the client still gets a
// clear answer: a 500 in the route's API shape (Anthropic's under /v1/messages, OpenAI's
// elsewhere) when nothing was sent yet, else an error event at the end of the stream.
//
//   forward_to_engine(engine_port, req, res, std::chrono::seconds(600), connections);

#include <chrono>
#include <memory>
#include <string>

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace strata::server {

class EngineConnections;
// `connections` holds the request's connection while it reads (server/engine_connections.h).
void forward_to_engine(int port, const httplib::Request& req, httplib::Response& res, std::chrono::seconds timeout,
                       const std::shared_ptr<EngineConnections>& connections);

// The route's error for a request the engine cannot take now (restarting, or not started yet).
void reply_engine_unavailable(const httplib::Request& req, httplib::Response& res, const std::string& why);

}  // namespace strata::server
