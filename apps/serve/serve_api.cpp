#include "apps/serve/serve_api.hpp"

#include <boost/json.hpp>
#include <boost/url/parse.hpp>
#include <sstream>

#include "apps/coordination/rule_event_codec.hpp"
#include "apps/report/report_page.hpp"
#include "apps/serve/job_json.hpp"
#include "core/model/utf8_text.hpp"

namespace rulestream {
namespace {

namespace json = boost::json;

// A job folder's name is bytes: one that is not UTF-8 must not make the whole listing invalid
// JSON, so its stray bytes are replaced (U+FFFD) in the answer.
HttpResponse json_response(unsigned status, const json::value& body) {
  return {status, "application/json", with_valid_utf8(json::serialize(body)) + "\n", {}};
}

HttpResponse error_response(unsigned status, const std::string& message) {
  return json_response(status, json::object{{"error", message}});
}

// Equal-time comparison: how long a wrong token takes to refuse says nothing of the right one.
bool same_secret(std::string_view given, std::string_view expected) {
  if (expected.empty() || given.size() != expected.size()) return false;
  unsigned char differ = 0;
  for (std::size_t i = 0; i < given.size(); ++i) {
    differ |= static_cast<unsigned char>(given[i] ^ expected[i]);
  }
  return differ == 0;
}

}  // namespace

ServeApi::ServeApi(const JobService& service, std::string token)
    : service_(service), token_(std::move(token)) {}

bool ServeApi::authorized(const HttpRequest& request) const {
  if (token_.empty()) return true;
  constexpr std::string_view kScheme = "Bearer ";
  if (!request.authorization.starts_with(kScheme)) return false;
  return same_secret(std::string_view(request.authorization).substr(kScheme.size()), token_);
}

HttpResponse ServeApi::handle(const HttpRequest& request) const {
  const auto parsed = boost::urls::parse_origin_form(request.target);
  if (!parsed) return error_response(400, "not a request target: " + request.target);
  std::vector<std::string> path;
  for (const auto& segment : parsed->segments()) path.push_back(segment);  // percent-decoded
  // HEAD is GET without the body (the server drops it).
  if (request.method != "GET" && request.method != "HEAD") {
    HttpResponse refused = error_response(405, "only GET and HEAD are served");
    refused.headers.emplace_back("Allow", "GET, HEAD");
    return refused;
  }
  // Kubernetes' probes: /livez (the process answers), /readyz (it is ready for work);
  // /healthz is /livez's older name.
  if (path == std::vector<std::string>{"livez"} || path == std::vector<std::string>{"healthz"}) {
    return {200, "text/plain", "ok\n", {}};
  }
  if (path == std::vector<std::string>{"readyz"}) {
    const std::string why = service_.unready_reason();
    if (why.empty()) return {200, "text/plain", "ready\n", {}};
    return {503, "text/plain", why + "\n", {}};
  }
  if (!authorized(request)) {
    HttpResponse refused = error_response(401, "a bearer token is required");
    refused.headers.emplace_back("WWW-Authenticate", "Bearer");
    return refused;
  }
  const JobRegistry& registry = service_.registry();
  const JobCoordinator* coordinator = service_.coordinator();
  if (path == std::vector<std::string>{"metrics"}) {
    std::optional<std::size_t> leases;
    if (coordinator) leases = coordinator->leases_held();
    return {200,
            "text/plain; version=0.0.4; charset=utf-8",
            service_.metrics().render(count_by_state(jobs_json(registry, coordinator)), leases),
            {}};
  }
  if (path.size() >= 2 && path[0] == "api" && path[1] == "jobs") {
    if (path.size() == 2) {
      json::array jobs;
      for (json::object& job : jobs_json(registry, coordinator)) jobs.push_back(std::move(job));
      return json_response(200, json::object{{"jobs", std::move(jobs)}});
    }
    const std::string& id = path[2];
    if (path.size() == 3) {
      if (auto job = job_json(registry, coordinator, id)) return json_response(200, *job);
      return error_response(404, "no job " + id);
    }
    if (path.size() == 4 && path[3] == "events") return job_events(id);
  }
  if (path.size() == 3 && path[0] == "jobs" && path[2] == "report") return report_page(path[1]);
  return error_response(404, "nothing at " + request.target);
}

bool ServeApi::slow(const HttpRequest& request) {
  const std::string_view target = request.target;
  const std::string_view path = target.substr(0, target.find('?'));
  return path.starts_with("/jobs/") && path.ends_with("/report");
}

HttpResponse ServeApi::job_events(const std::string& id) const {
  const auto job = service_.registry().job(id);
  const auto events = service_.registry().events(id);
  if (!job || !events) return error_response(404, "no job " + id);
  json::array list;
  std::int64_t dropped = job->events_dropped;
  if (const JobCoordinator* coordinator = service_.coordinator()) {
    // Whichever instance runs (or ran) the job, its owners logged its events in Redis: this
    // instance's registry holds only those of the jobs it ran itself, and since its start.
    JobEventLog::Events logged;
    try {
      logged = coordinator->events(id);
    } catch (const RedisError& error) {
      return error_response(503, "the events of job " + id +
                                     " are in Redis, which could not be "
                                     "reached: " +
                                     error.what());
    }
    for (const std::string& payload : logged.payloads) {
      list.push_back(json::parse(decode_rule_event(payload).to_json()));
    }
    dropped = logged.total - static_cast<std::int64_t>(logged.payloads.size());
  } else {
    for (const RuleEvent& event : *events) list.push_back(json::parse(event.to_json()));
  }
  // What this instance's sinks still hold of the job (a webhook whose peer is down): written,
  // not yet delivered nor dead-lettered.
  return json_response(200, json::object{{"job", id},
                                         {"events", std::move(list)},
                                         {"dropped", dropped},
                                         {"undelivered", service_.undelivered(job->trial)}});
}

HttpResponse ServeApi::report_page(const std::string& id) const {
  const auto job = service_.registry().job(id);
  if (!job) return error_response(404, "no job " + id);
  // Sharing a Redis, a job another instance runs (or ran) has its page here too: the page is a
  // replay of what the job's storage holds, with the rules this instance would give it (the
  // same service rules, or the job's own file). Without one, a job not started has no rules yet.
  if (!job->config && !service_.coordinator()) {
    return error_response(409, "job " + id + " has not started yet");
  }
  std::ostringstream page;
  try {
    write_report_page(*service_.configuration_of(*job), page);  // what the job holds now
  } catch (const std::exception& error) {
    return error_response(500, "the report of job " + id + " failed: " + error.what());
  }
  return {200, "text/html; charset=utf-8", page.str(), {}};
}

}  // namespace rulestream
