#pragma once
// Whether the client of a request is still connected, so that a generation whose client left is
// cancelled instead of running to its token limit. cpp-httplib 0.11 (Debian 12) does not expose a
// request's socket (later versions have Request::is_connection_closed), so the handler finds it
// among the process's descriptors by the connection's two ports and the peer address.
//
//   int fd = find_request_socket(req);        // -1 when not found: never reports a disconnect
//   if (peer_closed(fd)) task->cancel();

#include <httplib.h>

namespace strata::server {

int find_request_socket(const httplib::Request& req);
// True when the peer closed or reset the connection (poll without waiting).
bool peer_closed(int fd);

}  // namespace strata::server
