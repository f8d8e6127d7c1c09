#pragma once

// What `rulestream serve` answers over HTTP:
//   GET /healthz                 200 while the process serves
//   GET /readyz                  200 once the roots have been scanned, 503 before
//   GET /metrics                 Prometheus' text format (service_metrics.hpp)
//   GET /api/jobs                {"jobs": [job...]}, by id
//   GET /api/jobs/{id}           one job: id, path, format, state, error, last_step, found,
//                                ended, rules [{rule_configuration, rule, status (InProgress,
//                                IssuesFound, NoIssuesFound, Error, NotApplicable), firings,
//                                incidents, open_incidents, last_finding, last_finding_step,
//                                message}], events_dropped
//   GET /api/jobs/{id}/events    {"job": id, "events": [rule event...], "dropped": n,
//                                "undelivered": n (still queued in this instance's sinks)},
//                                newest last;
//                                sharing a Redis, the same on every instance (read from the job's
//                                event log there; 503 when Redis cannot be reached)
//   GET /jobs/{id}/report        the job's report page (`rulestream report`), made on request
// With a token, every path but /healthz and /readyz (probes carry no credentials) needs
// "Authorization: Bearer TOKEN"; 401 otherwise. Nothing answered names a sink's target or the
// token: sinks are not part of a job's answer, and metrics name sinks as they describe
// themselves (webhook URLs redacted).

#include <string>

#include "apps/serve/http_server.hpp"
#include "apps/serve/job_service.hpp"

namespace rulestream {

// Thread-safe, as HttpServer's handler must be: it only reads the service's thread-safe views.
class ServeApi {
 public:
  // `token` empty: no authorization asked.
  ServeApi(const JobService& service, std::string token);

  HttpResponse handle(const HttpRequest& request) const;
  // Whether answering takes long (a report page replays its job): HttpServer answers those on
  // a pool of their own, never on the threads that answer the probes.
  static bool slow(const HttpRequest& request);

 private:
  bool authorized(const HttpRequest& request) const;
  HttpResponse job_events(const std::string& id) const;
  HttpResponse report_page(const std::string& id) const;

  const JobService& service_;
  const std::string token_;
};

}  // namespace rulestream
