#pragma once
// Finding a collector's (or a proxy's) addresses with a deadline, and
// giving up at once when trace2d stops. glibc's getaddrinfo() cannot be
// interrupted: a DNS server that does not answer holds it about 5 s a try,
// for each server and attempt of resolv.conf, and a blocking lookup held
// the exporter's thread, and so a stop, as long. The lookup runs on a
// thread of its own, which the caller leaves behind when it gives up; that
// thread ends when getaddrinfo() does, and frees what it found. At most
// four such threads run at once: past them a lookup fails at once.
#include <netdb.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include <boost/asio/ip/tcp.hpp>

namespace trace2d::exporter {

// getaddrinfo()'s shape, so that a test can stand in for a DNS server.
using AddressLookup = std::function<int(const char* host, const char* port, const addrinfo* hints, addrinfo** found)>;

// The TCP addresses of host:port (numeric ones as they are). Throws
// TransportError with the reason alone, for the caller to say what it
// looked up: the name has no address or the lookup failed (gai_strerror's
// words), no answer within `deadline` ("... (timed out)"), `aborted`
// became true while it waited ("stopping"), or four lookups given up on
// still wait for theirs ("... still wait for an answer ...").
[[nodiscard]] std::vector<boost::asio::ip::tcp::endpoint> look_up(const std::string& host, const std::string& port,
                                                                  std::chrono::milliseconds deadline,
                                                                  const std::atomic<bool>& aborted,
                                                                  const AddressLookup& lookup = ::getaddrinfo);

// How many lookups' threads are still waiting for getaddrinfo().
[[nodiscard]] int lookups_unfinished();

}  // namespace trace2d::exporter
