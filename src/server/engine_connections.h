#pragma once
// The supervisor's open connections to its engine process (server/engine_proxy.h), so that when
// the engine ends every request still reading from it fails at once, as if its connection broke.
// A killed process's sockets do not always end with it: where another process holds a handle to
// one (Windows handle inheritance; under Wine its server process, which kept a killed engine's
// socket open), the connection stays open and a reader would wait for its timeout (600 s) while
// the supervisor had already started another engine. The supervisor knows the process ended: it
// fails each open request itself and shuts its connection down.
//
//   EngineConnections connections;
//   forward_to_engine(port, req, res, timeout, connections);   // registers its client while it reads
//   connections.abort_all();                                    // the engine's process has ended

#include <functional>
#include <map>
#include <mutex>

namespace httplib {
class Client;
}

namespace strata::server {

class EngineConnections {
public:
    // on_abort: fails the request (its answer so far stands; the client gets the error now).
    void add(httplib::Client* client, std::function<void()> on_abort);
    void remove(httplib::Client* client);
    // Fails each open request and shuts its connection down (a read blocked on it may still wait
    // for its timeout where the platform does not wake it; its late data is dropped).
    void abort_all();

private:
    std::mutex mutex_;
    std::map<httplib::Client*, std::function<void()>> open_;
};

}  // namespace strata::server
