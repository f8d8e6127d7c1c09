#include "core/model/curl_global.hpp"

#include <curl/curl.h>

#include <mutex>
#include <string>

#include "core/model/exceptions.hpp"

namespace rulestream {

void ensure_curl_initialised() {
  static std::once_flag once;
  std::call_once(once, [] {
    const CURLcode code = curl_global_init(CURL_GLOBAL_DEFAULT);
    if (code != CURLE_OK) {
      throw RulestreamError(std::string("cannot initialise libcurl: ") + curl_easy_strerror(code));
    }
  });
}

}  // namespace rulestream
