// Windows implementation of server/connection.h. Windows has no list of a process's sockets to
// walk (POSIX reads /proc/self/fd), but a SOCKET is a kernel handle: a multiple of 4, allocated
// lowest-free-first, so the handles of a serving process stay small. The request's socket is the
// handle among the first kMaxHandle whose two ports and peer address are the connection's; a
// socket beyond them is not found, and that request's disconnect is then never reported (its
// generation runs to its token limit, as it would without this check).
#ifdef _WIN32
#include "server/connection.h"

#include "server/socket_address.h"

namespace strata::server {

namespace {
constexpr uintptr_t kMaxHandle = 1u << 16;
}  // namespace

int find_request_socket(const httplib::Request& req) {
    for (uintptr_t h = 4; h < kMaxHandle; h += 4) {
        const auto sock = static_cast<SOCKET>(h);
        sockaddr_storage local{}, peer{};
        int local_len = sizeof local, peer_len = sizeof peer;
        if (getsockname(sock, reinterpret_cast<sockaddr*>(&local), &local_len) != 0) continue;
        if (getpeername(sock, reinterpret_cast<sockaddr*>(&peer), &peer_len) != 0) continue;
        if (port_of(local) == req.local_port && port_of(peer) == req.remote_port && address_of(peer) == req.remote_addr) {
            return static_cast<int>(h);
        }
    }
    return -1;
}

bool peer_closed(int fd) {
    if (fd < 0) return false;
    const auto sock = static_cast<SOCKET>(fd);
    // Winsock has no POLLRDHUP: a readable socket whose peek reads 0 bytes (or fails) is closed.
    WSAPOLLFD p{sock, POLLRDNORM, 0};
    if (WSAPoll(&p, 1, 0) <= 0) return false;
    if (p.revents & (POLLHUP | POLLERR | POLLNVAL)) return true;
    if ((p.revents & POLLRDNORM) == 0) return false;
    char c = 0;
    const int n = recv(sock, &c, 1, MSG_PEEK);
    return n == 0 || (n < 0 && WSAGetLastError() != WSAEWOULDBLOCK);
}

}  // namespace strata::server
#endif  // _WIN32
