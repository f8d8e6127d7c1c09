#include "apps/serve/open_file_limit.hpp"

#include <sys/resource.h>

#include <cerrno>
#include <system_error>

namespace rulestream {
namespace {

std::string limit_text(rlim_t limit) {
  return limit == RLIM_INFINITY ? "unlimited" : std::to_string(limit);
}

}  // namespace

std::string raise_open_file_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) {
    return "cannot read the open-file limit: " + std::generic_category().message(errno);
  }
  if (limit.rlim_cur == limit.rlim_max) return {};
  const rlim_t before = limit.rlim_cur;
  limit.rlim_cur = limit.rlim_max;
  if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) {
    return "cannot raise the open-file limit from " + limit_text(before) + " to " +
           limit_text(limit.rlim_max) + ": " + std::generic_category().message(errno);
  }
  return "raised the open-file limit from " + limit_text(before) + " to " +
         limit_text(limit.rlim_max);
}

}  // namespace rulestream
