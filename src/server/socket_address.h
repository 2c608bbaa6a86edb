#pragma once
// The sockets API's address types and calls, from the headers of each platform (Winsock 2 on
// Windows, the BSD headers on POSIX), and what the server reads from an address.

#ifdef _WIN32
#include <winsock2.h>
#include <ws2tcpip.h>
#else
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#endif

#include <string>

namespace strata::server {

int port_of(const sockaddr_storage& a);          // -1 for families other than IPv4 and IPv6
std::string address_of(const sockaddr_storage& a);  // numeric, "" for other families

}  // namespace strata::server
