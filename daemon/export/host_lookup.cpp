#include "daemon/export/host_lookup.hpp"

#include <sys/socket.h>

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>

#include "daemon/export/transport.hpp"

namespace trace2d::exporter {
namespace {

// What the lookup's thread and its caller share: whichever leaves last frees it.
struct Lookup {
  std::mutex mutex;
  std::condition_variable done;
  std::optional<int> result;  // getaddrinfo()'s, once it returned
  int error_number = 0;       // its errno, for EAI_SYSTEM
  addrinfo* found = nullptr;

  Lookup() = default;
  Lookup(const Lookup&) = delete;
  Lookup& operator=(const Lookup&) = delete;
  ~Lookup() {
    if (found != nullptr) {
      ::freeaddrinfo(found);
    }
  }
};

// Lookups given up on whose thread still waits for getaddrinfo(): a DNS
// server that never answers would otherwise leave one more thread behind
// at each retry. Past this many, a lookup fails at once (the export backs
// off and retries) until one of them returns.
constexpr int k_most_unfinished = 4;
std::atomic<int> g_unfinished{0};

}  // namespace

int lookups_unfinished() {
  return g_unfinished.load();
}

std::vector<boost::asio::ip::tcp::endpoint> look_up(const std::string& host, const std::string& port,
                                                    std::chrono::milliseconds deadline,
                                                    const std::atomic<bool>& aborted, const AddressLookup& lookup) {
  if (g_unfinished.fetch_add(1) >= k_most_unfinished) {
    g_unfinished.fetch_sub(1);
    throw TransportError(std::to_string(k_most_unfinished) +
                         " lookups given up on still wait for an answer (the name server does not answer)");
  }
  const auto shared = std::make_shared<Lookup>();
  try {
    std::thread([shared, host, port, lookup] {
      addrinfo hints{};
      hints.ai_family = AF_UNSPEC;
      hints.ai_socktype = SOCK_STREAM;
      hints.ai_flags = AI_ADDRCONFIG;  // as Asio's resolver asks: only families this host has
      addrinfo* found = nullptr;
      const int result = lookup(host.c_str(), port.c_str(), &hints, &found);
      const int error_number = errno;
      std::lock_guard lock(shared->mutex);
      shared->result = result;
      shared->error_number = error_number;
      shared->found = found;
      shared->done.notify_all();
      g_unfinished.fetch_sub(1);
    }).detach();
  } catch (const std::system_error& e) {
    g_unfinished.fetch_sub(1);
    throw TransportError(std::string("no thread to look it up on: ") + e.what());
  }
  const auto until = std::chrono::steady_clock::now() + deadline;
  std::unique_lock lock(shared->mutex);
  // abort() says nothing to this wait: it looks every 20 ms.
  while (!shared->result) {
    if (aborted.load()) {
      throw TransportError("stopping");
    }
    if (std::chrono::steady_clock::now() >= until) {
      throw TransportError("no answer within " + std::to_string(deadline.count()) + " ms (timed out)");
    }
    shared->done.wait_for(lock, std::chrono::milliseconds(20));
  }
  if (*shared->result != 0) {
    throw TransportError(*shared->result == EAI_SYSTEM ? std::strerror(shared->error_number)
                                                       : ::gai_strerror(*shared->result));
  }
  std::vector<boost::asio::ip::tcp::endpoint> endpoints;
  for (const addrinfo* a = shared->found; a != nullptr; a = a->ai_next) {
    if ((a->ai_family != AF_INET && a->ai_family != AF_INET6) || a->ai_addr == nullptr ||
        a->ai_addrlen > sizeof(sockaddr_in6)) {
      continue;
    }
    boost::asio::ip::tcp::endpoint endpoint;
    std::memcpy(endpoint.data(), a->ai_addr, a->ai_addrlen);
    endpoint.resize(a->ai_addrlen);
    endpoints.push_back(endpoint);
  }
  if (endpoints.empty()) {
    throw TransportError("no IPv4 or IPv6 address");
  }
  return endpoints;
}

}  // namespace trace2d::exporter
