#pragma once

#include <curl/curl.h>

#include <string>

#include "sources/s3/s3_credentials.hpp"

namespace rulestream {

// Makes libcurl sign the request on `handle` with AWS Signature Version 4 for `service` ("s3",
// "sts") in `region`: the key pair as user name and password (libcurl copies
// them), and the session token, where there is one, as an x-amz-security-token header appended
// to `headers`. Returns the header list, which the caller passes to CURLOPT_HTTPHEADER and frees.
// (libcurl 7.88 signs a session token only as a header the caller adds.)
curl_slist* sign_with_sigv4(CURL* handle, const S3Credentials& credentials,
                            const std::string& region, const std::string& service,
                            curl_slist* headers);

}  // namespace rulestream
