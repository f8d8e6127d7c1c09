#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "sources/s3/s3_client.hpp"
#include "sources/s3/s3_credentials.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream::testing {

// A real S3-compatible server for the tests: moto's server on 127.0.0.1 with signature checking
// on. It starts with INITIAL_NO_AUTH_ACTION_COUNT=4, spends those four unauthenticated calls on
// creating an IAM user, an allow-everything policy and an access key (boto3, through moto's IAM
// API), and from then on answers a wrongly signed request with 403 SignatureDoesNotMatch.
//
// moto 5.2 checks a signature against werkzeug's re-quoted URL rather than the request line as
// sent, so a correctly signed key or query value with '/', '+', '=' or non-ASCII bytes fails even
// from boto3; the launcher makes moto check against the raw request line instead (what S3 does),
// and changes nothing else.
class S3TestServer {
 public:
  // The server shared by a test program (started on first use, stopped at exit), or nullptr with
  // `why_not` saying why (no python3 with moto and boto3, no free port, ...).
  static S3TestServer* shared(std::string& why_not);

  // Starts a server of its own (tests that stop it).
  static std::unique_ptr<S3TestServer> start(std::string& why_not);
  ~S3TestServer();
  S3TestServer(const S3TestServer&) = delete;
  S3TestServer& operator=(const S3TestServer&) = delete;

  std::uint16_t port() const { return port_; }
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }
  const S3Credentials& credentials() const { return credentials_; }

  // Temporary credentials (a key id, a secret and a session token, from STS AssumeRole on a role
  // allowed everything), as a job on SageMaker has them. Throws std::runtime_error when moto
  // cannot make them.
  S3Credentials temporary_credentials() const;
  // A new role that may do everything and that anyone may assume (by AssumeRole, signed, or by
  // AssumeRoleWithWebIdentity, which this server answers unsigned, as AWS does): its ARN.
  std::string create_role() const;
  // The WebIdentityToken of every AssumeRoleWithWebIdentity so far, in order (moto does not
  // check them; a test does).
  std::vector<std::string> web_identity_tokens() const;

  // A client for this server (or another endpoint, such as a proxy in front of it).
  std::shared_ptr<S3Client> client(S3ClientOptions options = {}) const;
  std::shared_ptr<S3Client> client_via(const std::string& endpoint,
                                       S3ClientOptions options = {}) const;
  // The variables that S3Storage::open and the CLI read, pointing at this server.
  EnvironmentLookup environment(std::map<std::string, std::string> overrides = {}) const;
  // Sets them in this process (for the in-process CLI), replacing any AWS_* already set.
  void export_environment() const;

  // From now on, answers a listing (ListObjectsV2) of `bucket` whose prefix starts with
  // `prefix` with 403 AccessDenied: a key whose rights stop short of part of a trial.
  void refuse_listings_under(const std::string& bucket, const std::string& prefix) const;

  // From now on, answers the next `count` requests on `bucket` (any kind, or only reads of a
  // byte range) with HTTP `status` and an S3 error document of `code` ("SlowDown"), as an
  // overloaded S3 does; then serves it again. failures_served says how many such answers went
  // out.
  enum class Failing { AnyRequest, RangedReads };
  void fail_next_requests(const std::string& bucket, int count, int status, const std::string& code,
                          Failing which = Failing::AnyRequest) const;
  int failures_served(const std::string& bucket) const;

  // A fresh bucket name, unique within this server's life.
  std::string new_bucket(const std::string& stem) const;

 private:
  S3TestServer() = default;
  CommandResult run_role_script(const std::string& mode) const;

  pid_t pid_ = -1;
  std::uint16_t port_ = 0;
  S3Credentials credentials_;
  std::unique_ptr<TempDir> scratch_;
};

// Whether the S3 tests must fail rather than skip when no server can start
// (RULESTREAM_REQUIRE_S3_SERVER=1, which .ci/run sets).
bool s3_server_required();

// The base of the S3 suites: the shared server (the test skips without one, or fails when
// s3_server_required()), a client signed with its key, and a fresh bucket named after `stem`.
// A subclass's SetUp() calls this one first and returns if IsSkipped().
class S3ServerTest : public ::testing::Test {
 protected:
  explicit S3ServerTest(std::string stem) : stem_(std::move(stem)) {}
  void SetUp() override;

  S3TestServer* server_ = nullptr;
  std::shared_ptr<S3Client> client_;
  std::string bucket_;

 private:
  std::string stem_;
};

// Text as the bytes an upload takes.
std::span<const std::byte> bytes_of(std::string_view text);
// The message of the StorageError that `action` throws, or "(no StorageError)".
std::string storage_error_of(const std::function<void()>& action);

// Uploads every file under `folder` to s3://bucket/prefix/<path relative to folder>, in
// parallel. Returns how many files it uploaded.
std::size_t upload_folder(const S3Client& client, const std::filesystem::path& folder,
                          const std::string& bucket, const std::string& prefix);

// Uploads the files under `folder` that are not in `already` (paths relative to folder), and
// adds them to it: for following a job that a local writer is producing.
std::size_t upload_new_files(const S3Client& client, const std::filesystem::path& folder,
                             const std::string& bucket, const std::string& prefix,
                             std::set<std::string>& already);

}  // namespace rulestream::testing
