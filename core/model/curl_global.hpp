#pragma once

namespace rulestream {

// curl_global_init is not thread-safe and must run once before any libcurl handle exists: every
// user of libcurl calls this first. Throws RulestreamError when libcurl cannot start.
void ensure_curl_initialised();

}  // namespace rulestream
