#pragma once

#include <chrono>
#include <memory>

#include "sources/s3/credential_provider.hpp"

namespace rulestream {

// The role credentials of an EC2 instance (or of anything that serves the instance metadata
// service's API), by IMDSv2: PUT /latest/api/token for a session token, then, with it,
// GET /latest/meta-data/iam/security-credentials/ for the role's name and
// GET .../security-credentials/ROLE for its credentials. The service is
// AWS_EC2_METADATA_SERVICE_ENDPOINT, else http://169.254.169.254. nullptr when
// AWS_EC2_METADATA_DISABLED is "true". There is no fallback to IMDSv1: an instance that
// requires tokens refuses it anyway, and one that does not still serves v2.
std::unique_ptr<CredentialProvider> instance_metadata_provider(
    const EnvironmentLookup& environment,
    std::chrono::milliseconds timeout = std::chrono::milliseconds(1000));

}  // namespace rulestream
