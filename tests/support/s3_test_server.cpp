#include "tests/support/s3_test_server.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <future>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/model/exceptions.hpp"
#include "core/model/shared_bytes.hpp"
#include "sources/local/local_storage.hpp"
#include "tests/support/loopback_ports.hpp"

extern char** environ;

namespace rulestream::testing {
namespace {

// Runs moto's server after pointing its signature check at the raw request line (see the
// header), and with listings refused where a test asks (refuse_listings_under): a ListObjectsV2
// of a bucket whose prefix starts with a refused one is answered 403 AccessDenied, as S3 answers
// a key without the right. Arguments are moto_server's own (-H HOST -p PORT).
constexpr std::string_view kLauncher = R"PY(
import os, sys
from moto.core import responses, authorization

_setup_class = responses.BaseResponse.setup_class
def setup_class(self, request, full_url, headers, *args, **kwargs):
    _setup_class(self, request, full_url, headers, *args, **kwargs)
    environ = getattr(request, "environ", None) or {}
    self._raw_request_uri = environ.get("RAW_URI") or environ.get("REQUEST_URI")
responses.BaseResponse.setup_class = setup_class

_authenticate = authorization.ActionAuthenticatorMixin._authenticate_and_authorize_action
def authenticate(self, iam_request_cls, resource="*"):
    if self._get_action() == "AssumeRoleWithWebIdentity" and not self.headers.get("Authorization"):
        # Unsigned, as on AWS (the token is the proof); the tokens are kept for the tests.
        with open(os.environ["RULESTREAM_TEST_WEB_IDENTITY_TOKENS"], "a") as tokens:
            tokens.write(self._get_param("WebIdentityToken") + "\n")
        return
    raw = getattr(self, "_raw_request_uri", None)
    if not raw:
        return _authenticate(self, iam_request_cls, resource)
    kept = self.uri
    self.uri = "http://verify" + raw
    try:
        return _authenticate(self, iam_request_cls, resource)
    finally:
        self.uri = kept
authorization.ActionAuthenticatorMixin._authenticate_and_authorize_action = authenticate

import os
from urllib.parse import parse_qs, unquote
from moto.moto_server.werkzeug_app import DomainDispatcherApplication
import threading
_refused_file = os.environ.get("RULESTREAM_TEST_REFUSED_LISTINGS", "")
_failing_file = os.environ.get("RULESTREAM_TEST_FAILING_REQUESTS", "")
_failing_lock = threading.Lock()
_failures_served = {}
def _next_failure(bucket, ranged):
    # "bucket<TAB>count<TAB>status<TAB>code<TAB>which" lines: the next `count` requests on
    # `bucket` fail; which is "any", or "ranged" for reads with a Range header only.
    with _failing_lock:
        if not os.path.exists(_failing_file):
            return None
        rules = [line.split("\t") for line in open(_failing_file).read().splitlines() if line]
        for rule in rules:
            if rule[4] == "ranged" and not ranged:
                continue
            if rule[0] == bucket and _failures_served.get(bucket, 0) < int(rule[1]):
                _failures_served[bucket] = _failures_served.get(bucket, 0) + 1
                with open(_failing_file + ".served", "w") as served:
                    served.write("".join(f"{b}\t{n}\n" for b, n in _failures_served.items()))
                return rule[2], rule[3]
    return None
_dispatch = DomainDispatcherApplication.__call__
def dispatch(self, environ, start_response):
    query = parse_qs(environ.get("QUERY_STRING", ""), keep_blank_values=True)
    failure = _next_failure(unquote(environ.get("PATH_INFO", "/").lstrip("/").split("/")[0]),
                            environ.get("REQUEST_METHOD") == "GET" and "HTTP_RANGE" in environ)
    if failure:
        status, code = failure
        body = ('<?xml version="1.0" encoding="UTF-8"?><Error><Code>' + code +
                '</Code><Message>injected by the test</Message></Error>').encode()
        start_response(status + " Injected", [("Content-Type", "application/xml"),
                                              ("Content-Length", str(len(body)))])
        return [body]
    if environ.get("REQUEST_METHOD") == "GET" and "list-type" in query and os.path.exists(_refused_file):
        bucket = unquote(environ.get("PATH_INFO", "/").lstrip("/").split("/")[0])
        prefix = query.get("prefix", [""])[0]
        with open(_refused_file) as refused:
            for line in refused.read().splitlines():
                refused_bucket, _, refused_prefix = line.partition("\t")
                if bucket == refused_bucket and prefix.startswith(refused_prefix):
                    body = (b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code>'
                            b'<Message>Access Denied</Message></Error>')
                    start_response("403 Forbidden", [("Content-Type", "application/xml"),
                                                      ("Content-Length", str(len(body)))])
                    return [body]
    return _dispatch(self, environ, start_response)
DomainDispatcherApplication.__call__ = dispatch

from moto.server import main
main(sys.argv[1:])
)PY";

// The four unauthenticated calls: a user, a policy that allows everything, the attachment, and
// the access key the tests then sign with. Prints "KEY_ID SECRET".
constexpr std::string_view kBootstrap = R"PY(
import json, sys, boto3
iam = boto3.client("iam", endpoint_url=sys.argv[1], region_name="us-east-1",
                   aws_access_key_id="bootstrap", aws_secret_access_key="bootstrap")
iam.create_user(UserName="rulestream-tests")
policy = iam.create_policy(PolicyName="everything", PolicyDocument=json.dumps(
    {"Version": "2012-10-17",
     "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}))
iam.attach_user_policy(UserName="rulestream-tests", PolicyArn=policy["Policy"]["Arn"])
key = iam.create_access_key(UserName="rulestream-tests")["AccessKey"]
print(key["AccessKeyId"], key["SecretAccessKey"])
)PY";

constexpr int kUnauthenticatedCalls = 4;

// Signed with the test user's key: a role that may do everything and that anyone may assume.
// Prints its ARN; with a fifth argument "assume", assumes it and prints "KEY_ID SECRET TOKEN".
constexpr std::string_view kRole = R"PY(
import json, sys, uuid, boto3
endpoint, key, secret = sys.argv[1:4]
session = dict(endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id=key,
               aws_secret_access_key=secret)
iam = boto3.client("iam", **session)
name = "rulestream-" + uuid.uuid4().hex[:12]
anyone = {"Version": "2012-10-17", "Statement": [
    {"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "sts:AssumeRole"}]}
everything = {"Version": "2012-10-17",
              "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}
role = iam.create_role(RoleName=name, AssumeRolePolicyDocument=json.dumps(anyone))
iam.put_role_policy(RoleName=name, PolicyName="everything", PolicyDocument=json.dumps(everything))
if sys.argv[4:] != ["assume"]:
    print(role["Role"]["Arn"])
    sys.exit(0)
c = boto3.client("sts", **session).assume_role(RoleArn=role["Role"]["Arn"],
                                                RoleSessionName="tests")["Credentials"]
print(c["AccessKeyId"], c["SecretAccessKey"], c["SessionToken"])
)PY";

std::string tail_of(const std::filesystem::path& log) {
  std::string text = read_text_file(log);
  if (text.size() > 800) text = "..." + text.substr(text.size() - 800);
  return text;
}

std::vector<std::filesystem::path> files_under(const std::filesystem::path& folder) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(folder)) {
    if (entry.is_regular_file() && entry.path().extension() != ".tmp") {
      files.push_back(entry.path().lexically_relative(folder));
    }
  }
  // Path order puts an event file before its index file, as smdebug writes them.
  std::sort(files.begin(), files.end());
  return files;
}

void upload_one(const S3Client& client, const std::filesystem::path& folder,
                const std::filesystem::path& relative, const std::string& bucket,
                const std::string& prefix) {
  const LocalStorage local(folder);
  const SharedBytes bytes = local.read(relative.generic_string());
  const std::string key =
      (prefix.empty() ? std::string() : prefix + "/") + relative.generic_string();
  client.put(bucket, key, bytes.span());
}

}  // namespace

S3TestServer* S3TestServer::shared(std::string& why_not) {
  static std::string failure;
  static std::unique_ptr<S3TestServer> server = start(failure);
  why_not = failure;
  return server.get();
}

std::unique_ptr<S3TestServer> S3TestServer::start(std::string& why_not) {
  if (run_command("python3 -c 'import moto.server, boto3'").exit_code != 0) {
    why_not = "python3 cannot import moto.server and boto3 (pip install 'moto[server]' boto3)";
    return nullptr;
  }
  std::unique_ptr<S3TestServer> server(new S3TestServer());
  server->scratch_ = std::make_unique<TempDir>();
  const auto launcher = server->scratch_->path() / "moto_launcher.py";
  const auto bootstrap = server->scratch_->path() / "moto_bootstrap.py";
  const auto log = server->scratch_->path() / "moto.log";
  write_text_file(launcher, kLauncher);
  write_text_file(bootstrap, kBootstrap);

  server->port_ = free_port();
  if (server->port_ == 0) {
    why_not = "no free port on 127.0.0.1 for the S3 test server";
    return nullptr;
  }
  std::vector<std::string> environment;
  for (char** variable = environ; *variable != nullptr; ++variable) {
    if (!std::string_view(*variable).starts_with("INITIAL_NO_AUTH_ACTION_COUNT=")) {
      environment.emplace_back(*variable);
    }
  }
  environment.push_back("INITIAL_NO_AUTH_ACTION_COUNT=" + std::to_string(kUnauthenticatedCalls));
  environment.push_back("RULESTREAM_TEST_REFUSED_LISTINGS=" +
                        (server->scratch_->path() / "refused_listings.txt").string());
  environment.push_back("RULESTREAM_TEST_FAILING_REQUESTS=" +
                        (server->scratch_->path() / "failing_requests.txt").string());
  environment.push_back("RULESTREAM_TEST_WEB_IDENTITY_TOKENS=" +
                        (server->scratch_->path() / "web_identity_tokens.txt").string());
  std::vector<char*> envp;
  for (auto& variable : environment) envp.push_back(variable.data());
  envp.push_back(nullptr);
  const std::string port_text = std::to_string(server->port_);
  const std::string launcher_text = launcher.string();
  std::vector<const char*> argv = {"python3", launcher_text.c_str(), "-H",   "127.0.0.1",
                                   "-p",      port_text.c_str(),     nullptr};
  const int log_fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const pid_t pid = ::fork();
  if (pid == 0) {
    // Only async-signal-safe calls between fork and exec.
    if (log_fd >= 0) {
      ::dup2(log_fd, STDOUT_FILENO);
      ::dup2(log_fd, STDERR_FILENO);
    }
    ::setpgid(0, 0);
    ::execvpe("python3", const_cast<char* const*>(argv.data()), envp.data());
    ::_exit(127);
  }
  if (log_fd >= 0) ::close(log_fd);
  if (pid < 0) {
    why_not = "cannot fork the S3 test server";
    return nullptr;
  }
  server->pid_ = pid;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!accepts_connections(server->port_)) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      server->pid_ = -1;
      why_not = "moto's server exited at start: " + tail_of(log);
      return nullptr;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      why_not = "moto's server did not listen within 30 s: " + tail_of(log);
      return nullptr;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const CommandResult keys =
      run_command("python3 '" + bootstrap.string() + "' '" + server->endpoint() + "'");
  std::istringstream words(keys.out);
  words >> server->credentials_.access_key_id >> server->credentials_.secret_access_key;
  if (keys.exit_code != 0 || server->credentials_.secret_access_key.empty()) {
    why_not = "cannot create an IAM user and access key in moto: " + keys.err;
    return nullptr;
  }
  server->credentials_.region = "us-east-1";
  server->credentials_.source = "the S3 test server";
  return server;
}

S3TestServer::~S3TestServer() {
  if (pid_ > 0) {
    ::kill(-pid_, SIGTERM);  // its process group: moto's reloader children too
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
}

CommandResult S3TestServer::run_role_script(const std::string& mode) const {
  const auto script = scratch_->path() / "role.py";
  write_text_file(script, kRole);
  return run_command("python3 '" + script.string() + "' '" + endpoint() + "' '" +
                     credentials_.access_key_id + "' '" + credentials_.secret_access_key + "' " +
                     mode);
}

std::string S3TestServer::create_role() const {
  const CommandResult result = run_role_script("");
  std::istringstream words(result.out);
  std::string arn;
  words >> arn;
  if (result.exit_code != 0 || !arn.starts_with("arn:")) {
    throw std::runtime_error("cannot create a role in moto: " + result.err);
  }
  return arn;
}

std::vector<std::string> S3TestServer::web_identity_tokens() const {
  std::ifstream in(scratch_->path() / "web_identity_tokens.txt");
  std::vector<std::string> tokens;
  for (std::string line; std::getline(in, line);) tokens.push_back(line);
  return tokens;
}

S3Credentials S3TestServer::temporary_credentials() const {
  const CommandResult result = run_role_script("assume");
  S3Credentials temporary;
  std::istringstream words(result.out);
  words >> temporary.access_key_id >> temporary.secret_access_key >> temporary.session_token;
  if (result.exit_code != 0 || temporary.session_token.empty()) {
    throw std::runtime_error("cannot assume a role in moto: " + result.err);
  }
  temporary.region = credentials_.region;
  temporary.source = "STS AssumeRole on the S3 test server";
  return temporary;
}

std::shared_ptr<S3Client> S3TestServer::client(S3ClientOptions options) const {
  return client_via(endpoint(), options);
}

std::shared_ptr<S3Client> S3TestServer::client_via(const std::string& endpoint,
                                                   S3ClientOptions options) const {
  return std::make_shared<S3Client>(S3Endpoint::resolve(endpoint, credentials_.region),
                                    credentials_, options);
}

EnvironmentLookup S3TestServer::environment(std::map<std::string, std::string> overrides) const {
  std::map<std::string, std::string> variables = {
      {"AWS_ACCESS_KEY_ID", credentials_.access_key_id},
      {"AWS_SECRET_ACCESS_KEY", credentials_.secret_access_key},
      {"AWS_REGION", credentials_.region},
      {"AWS_ENDPOINT_URL", endpoint()},
      {"HOME", "/nonexistent"}};
  for (auto& [name, value] : overrides) variables[name] = value;
  return [variables](std::string_view name) -> std::optional<std::string> {
    const auto it = variables.find(std::string(name));
    if (it == variables.end()) return std::nullopt;
    return it->second;
  };
}

void S3TestServer::export_environment() const {
  ::setenv("AWS_ACCESS_KEY_ID", credentials_.access_key_id.c_str(), 1);
  ::setenv("AWS_SECRET_ACCESS_KEY", credentials_.secret_access_key.c_str(), 1);
  ::setenv("AWS_REGION", credentials_.region.c_str(), 1);
  ::unsetenv("AWS_SESSION_TOKEN");
  ::unsetenv("AWS_ENDPOINT_URL");
  ::unsetenv("AWS_PROFILE");
}

void S3TestServer::refuse_listings_under(const std::string& bucket,
                                         const std::string& prefix) const {
  std::ofstream refused(scratch_->path() / "refused_listings.txt", std::ios::app);
  refused << bucket << '\t' << prefix << '\n';
}

void S3TestServer::fail_next_requests(const std::string& bucket, int count, int status,
                                      const std::string& code, Failing which) const {
  std::ofstream failing(scratch_->path() / "failing_requests.txt", std::ios::app);
  failing << bucket << '\t' << count << '\t' << status << '\t' << code << '\t'
          << (which == Failing::RangedReads ? "ranged" : "any") << '\n';
}

int S3TestServer::failures_served(const std::string& bucket) const {
  std::ifstream served(scratch_->path() / "failing_requests.txt.served");
  std::string name;
  int count = 0;
  while (served >> name >> count) {
    if (name == bucket) return count;
  }
  return 0;
}

std::string S3TestServer::new_bucket(const std::string& stem) const {
  static std::atomic<int> counter{0};
  return stem + "-" + std::to_string(::getpid()) + "-" + std::to_string(++counter);
}

void S3ServerTest::SetUp() {
  std::string why_not;
  server_ = S3TestServer::shared(why_not);
  if (server_ == nullptr) {
    if (s3_server_required()) FAIL() << "no S3 test server: " << why_not;
    GTEST_SKIP() << "no S3 test server: " << why_not;
  }
  client_ = server_->client();
  bucket_ = server_->new_bucket(stem_);
  client_->create_bucket(bucket_);
}

std::span<const std::byte> bytes_of(std::string_view text) {
  return std::as_bytes(std::span(text.data(), text.size()));
}

std::string storage_error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const StorageError& error) {
    return error.what();
  }
  return "(no StorageError)";
}

bool s3_server_required() {
  const char* value = std::getenv("RULESTREAM_REQUIRE_S3_SERVER");
  return value != nullptr && std::string_view(value) == "1";
}

std::size_t upload_folder(const S3Client& client, const std::filesystem::path& folder,
                          const std::string& bucket, const std::string& prefix) {
  const auto files = files_under(folder);
  constexpr std::size_t kUploaders = 4;
  std::vector<std::future<void>> uploaders;
  for (std::size_t first = 0; first < kUploaders; ++first) {
    uploaders.push_back(std::async(std::launch::async, [&, first] {
      for (std::size_t i = first; i < files.size(); i += kUploaders) {
        upload_one(client, folder, files[i], bucket, prefix);
      }
    }));
  }
  for (auto& uploader : uploaders) uploader.get();
  return files.size();
}

std::size_t upload_new_files(const S3Client& client, const std::filesystem::path& folder,
                             const std::string& bucket, const std::string& prefix,
                             std::set<std::string>& already) {
  std::size_t uploaded = 0;
  for (const auto& relative : files_under(folder)) {
    if (!already.insert(relative.generic_string()).second) continue;
    upload_one(client, folder, relative, bucket, prefix);
    ++uploaded;
  }
  return uploaded;
}

}  // namespace rulestream::testing
