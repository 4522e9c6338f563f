#pragma once
// Boost 1.74's Asio uses std::exchange without including <utility>; with
// GCC 12 that no longer arrives transitively. Include Asio through here.

#include <utility>

#include <boost/asio.hpp>

namespace trace2d {
namespace asio = boost::asio;
}
