#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "sources/s3/credential_provider.hpp"

namespace rulestream {

struct ContainerCredentialOptions {
  // Where AWS_CONTAINER_CREDENTIALS_RELATIVE_URI points below: the ECS agent (tests: a local
  // server).
  std::string relative_host = "http://169.254.170.2";
  std::chrono::milliseconds timeout{2000};
};

// The credentials a container agent serves (ECS task roles, SageMaker, EKS Pod Identity):
// GET AWS_CONTAINER_CREDENTIALS_RELATIVE_URI on the ECS agent, else
// AWS_CONTAINER_CREDENTIALS_FULL_URI, with the Authorization header from
// AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE (read on each fetch) or
// AWS_CONTAINER_AUTHORIZATION_TOKEN. nullptr when neither URI variable is set. Throws
// StorageError when the full URI is neither https nor http to a loopback address or to an
// ECS/EKS agent's address, the SDKs' rule: credentials must not cross a network in clear text.
std::unique_ptr<CredentialProvider> container_credential_provider(
    const EnvironmentLookup& environment, const ContainerCredentialOptions& options = {});

}  // namespace rulestream
