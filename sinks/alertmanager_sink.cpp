#include "sinks/alertmanager_sink.hpp"

#include <algorithm>
#include <boost/json.hpp>
#include <boost/url/parse.hpp>
#include <boost/url/url.hpp>
#include <cctype>
#include <stdexcept>

namespace rulestream {
namespace {

constexpr std::string_view kAlertsPath = "/api/v2/alerts";
// Alerts per POST: Prometheus sends at most 64 at a time by default; a resend of every alert of
// many jobs stays a series of small requests.
constexpr std::size_t kAlertsPerPost = 64;

std::map<std::string, std::string> labels_of(const RuleEvent& event, const std::string& severity) {
  std::map<std::string, std::string> labels{{"alertname", event.rule_configuration},
                                            {"training_job", event.trial},
                                            {"rule", event.rule},
                                            {"rule_configuration", event.rule_configuration},
                                            {"severity", severity}};
  // One alert per incident: its id tells two incidents of a rule apart.
  if (event.incident) labels["incident"] = event.incident->id;
  if (event.incident && !event.tensors.empty()) labels["series"] = event.tensors.front();
  return labels;
}

boost::json::object string_map(const std::map<std::string, std::string>& map) {
  boost::json::object object;
  for (const auto& [key, value] : map) object[key] = value;
  return object;
}

}  // namespace

std::string AlertmanagerSink::alerts_url(const std::string& url) {
  const auto parsed = boost::urls::parse_uri(url);
  if (!parsed) throw std::invalid_argument("alertmanager " + redact_url(url) + ": not a valid URL");
  boost::urls::url alerts(*parsed);
  std::string path(alerts.encoded_path());
  if (!path.ends_with(kAlertsPath)) {
    while (!path.empty() && path.back() == '/') path.pop_back();
    path += kAlertsPath;
    alerts.set_encoded_path(path);
  }
  return std::string(alerts.buffer());
}

AlertmanagerSink::AlertmanagerSink(Options options) : options_(std::move(options)) {
  const std::string where = "alertmanager " + redact_url(options_.url);
  if (options_.resend_interval.count() <= 0) {
    throw std::invalid_argument(where + ": the resend interval must be positive");
  }
  if (options_.severity.empty()) throw std::invalid_argument(where + ": the severity is empty");
  if (!options_.generator_url.empty() && !boost::urls::parse_uri(options_.generator_url)) {
    throw std::invalid_argument(where + ": generator_url is not a URL");
  }
  queue_ =
      std::make_unique<DeliveryQueue>("alertmanager", alerts_url(options_.url), options_.delivery);
  resender_ = std::thread([this] { resend_while_firing(); });
}

AlertmanagerSink::~AlertmanagerSink() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  resender_.join();
  // queue_ goes next: what is queued is delivered or dead-lettered.
}

std::string AlertmanagerSink::describe() const {
  return "alertmanager " + queue_->redacted_url();
}

void AlertmanagerSink::write(const RuleEvent& event) {
  const AlertKey key{event.trial, event.rule_configuration,
                     event.incident ? event.incident->id : std::string()};
  const std::lock_guard lock(mutex_);
  if (event.kind == RuleEvent::Kind::IncidentResolved) {
    const auto found = firing_.find(key);
    if (found == firing_.end()) return;
    Alert alert = std::move(found->second);
    firing_.erase(found);
    alert.ends_at = std::max(event.time, alert.starts_at);
    alert.annotations["summary"] = event.rule_configuration + " (" + event.rule + ") on job " +
                                   event.trial + ": incident resolved at step " +
                                   std::to_string(event.global_step) + " after " +
                                   std::to_string(alert.firings) + " firings";
    alert.annotations["resolution"] = event.message;
    send({alert}, "resolved alert");
    return;
  }
  if (event.kind == RuleEvent::Kind::ConditionMet) {
    const auto [found, new_alert] = firing_.try_emplace(key);
    Alert& alert = found->second;
    if (new_alert) {
      alert.labels = labels_of(event, options_.severity);
      alert.starts_at = event.time;
    }
    ++alert.firings;
    alert.annotations = {
        {"summary", event.rule_configuration + " (" + event.rule + ") found an issue in job " +
                        event.trial + " at step " + std::to_string(event.global_step)},
        {"description", event.message},
        {"step", std::to_string(event.global_step)},
        {"firings", std::to_string(alert.firings)}};
    // A later finding of a firing alert goes with the next resend: a rule that fires at every
    // step must not cost a request per step.
    if (new_alert) send({alert}, "new alert");
    return;
  }
  // The rule's status: whatever of its alerts still fires (its incidents resolve before it, so
  // this is a rule whose firings are not grouped) ends with the job.
  std::vector<Alert> ended;
  for (auto found = firing_.begin(); found != firing_.end();) {
    if (std::get<0>(found->first) != event.trial ||
        std::get<1>(found->first) != event.rule_configuration) {
      ++found;
      continue;
    }
    Alert alert = std::move(found->second);
    found = firing_.erase(found);
    // Alertmanager refuses an alert that ends before it starts.
    alert.ends_at = std::max(event.time, alert.starts_at);
    const std::string status = event.status ? std::string(rule_status_name(*event.status)) : "";
    alert.annotations["summary"] = event.rule_configuration + " (" + event.rule + ") on job " +
                                   event.trial + " ended " + status + " after " +
                                   std::to_string(alert.firings) + " firings";
    alert.annotations["status"] = status;
    if (!event.message.empty()) alert.annotations["status_message"] = event.message;
    ended.push_back(std::move(alert));
  }
  if (!ended.empty()) send(ended, "resolved alert");
}

void AlertmanagerSink::resend_while_firing() {
  std::unique_lock lock(mutex_);
  // Timed from each wake, not on a fixed grid: after a stall (a suspended VM) one resend
  // follows, not a burst of the ones missed.
  while (!wake_.wait_for(lock, options_.resend_interval, [&] { return stopping_; })) {
    if (firing_.empty()) continue;
    if (options_.may_resend) {
      lock.unlock();
      bool may = false;
      try {
        may = options_.may_resend();
      } catch (const std::exception&) {
        // Not known to be allowed: skipped, asked again at the next resend.
      }
      lock.lock();
      if (stopping_) break;
      if (!may || firing_.empty()) continue;
    }
    std::vector<Alert> alerts;
    try {
      alerts.reserve(firing_.size());
      for (const auto& [key, alert] : firing_) alerts.push_back(alert);
      send(alerts, "resend");
    } catch (const std::exception&) {
      // Only an allocation failure gets here; the next resend tries again (nothing may leave
      // this thread: it would end the process).
    }
  }
}

void AlertmanagerSink::send(const std::vector<Alert>& alerts, std::string_view why) {
  const auto now = std::chrono::system_clock::now();
  const auto valid_until = now + 4 * options_.resend_interval;
  for (std::size_t first = 0; first < alerts.size(); first += kAlertsPerPost) {
    const std::size_t last = std::min(alerts.size(), first + kAlertsPerPost);
    boost::json::array batch;
    for (std::size_t i = first; i < last; ++i) {
      const Alert& alert = alerts[i];
      boost::json::object json{{"labels", string_map(alert.labels)},
                               {"annotations", string_map(alert.annotations)},
                               {"startsAt", iso8601_utc(alert.starts_at)},
                               {"endsAt", iso8601_utc(alert.ends_at.value_or(valid_until))}};
      if (!options_.generator_url.empty()) json["generatorURL"] = options_.generator_url;
      batch.push_back(std::move(json));
    }
    Delivery delivery;
    delivery.body = boost::json::serialize(batch);
    delivery.dead_letter_members = "\"alerts\":" + delivery.body;
    delivery.label = std::string(why) + " (" +
                     (last - first == 1 ? "alert " + alerts[first].labels.at("alertname") +
                                              " of job " + alerts[first].labels.at("training_job")
                                        : std::to_string(last - first) + " alerts") +
                     ")";
    queue_->enqueue(std::move(delivery));
  }
}

void AlertmanagerSink::flush() {
  queue_->flush();
}

std::optional<SinkDeliveryCounts> AlertmanagerSink::delivery() const {
  return queue_->counts();
}

}  // namespace rulestream
