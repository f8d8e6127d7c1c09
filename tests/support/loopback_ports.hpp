#pragma once

// Ports on 127.0.0.1 for the servers tests start (moto's S3, redis-server).

#include <cstdint>

namespace rulestream::testing {

// A port on 127.0.0.1 that was free a moment ago (bound and let go), or 0 if none could be had.
// Another process may take it before the caller's server binds it: callers retry.
std::uint16_t free_port();

// Whether something accepts TCP connections on 127.0.0.1:port now.
bool accepts_connections(std::uint16_t port);

}  // namespace rulestream::testing
