#include "tests/support/alertmanager_receiver.hpp"

#include <boost/json.hpp>
#include <boost/url/parse.hpp>
#include <ctime>
#include <regex>
#include <thread>

namespace rulestream::testing {
namespace {

namespace json = boost::json;

bool read_string_map(const json::value& value, std::map<std::string, std::string>& map) {
  if (!value.is_object()) return false;
  for (const auto& [key, item] : value.as_object()) {
    if (!item.is_string()) return false;
    map[std::string(key)] = std::string(item.as_string());
  }
  return true;
}

std::string check_alert(const json::value& value, ReceivedAlert& alert) {
  if (!value.is_object()) return "an alert is not an object";
  const json::object& object = value.as_object();
  for (const auto& [key, item] : object) {
    if (key != "labels" && key != "annotations" && key != "startsAt" && key != "endsAt" &&
        key != "generatorURL") {
      return "unknown member " + std::string(key);
    }
  }
  const json::value* labels = object.if_contains("labels");
  if (labels == nullptr) return "labels in body is required";
  if (!read_string_map(*labels, alert.labels)) return "labels must map names to strings";
  if (alert.labels.empty()) return "at least one label pair required";
  static const std::regex kLabelName("[a-zA-Z_][a-zA-Z0-9_]*");
  for (const auto& [name, text] : alert.labels) {
    if (!std::regex_match(name, kLabelName)) return "invalid label name " + name;
    if (text.empty()) return "empty value of label " + name;
  }
  if (!alert.labels.contains("alertname")) return "no alertname label";
  if (const json::value* annotations = object.if_contains("annotations")) {
    if (!read_string_map(*annotations, alert.annotations)) {
      return "annotations must map names to strings";
    }
  }
  const auto time = [&](const char* key, std::string& text,
                        std::chrono::system_clock::time_point& point) -> std::string {
    const json::value* item = object.if_contains(key);
    if (item == nullptr) return "";
    if (!item->is_string() || !parse_rfc3339(std::string(item->as_string()), point)) {
      return std::string(key) + " must be an RFC 3339 date-time";
    }
    text = std::string(item->as_string());
    return "";
  };
  if (auto problem = time("startsAt", alert.starts_at_text, alert.starts_at); !problem.empty()) {
    return problem;
  }
  if (auto problem = time("endsAt", alert.ends_at_text, alert.ends_at); !problem.empty()) {
    return problem;
  }
  if (!alert.starts_at_text.empty() && !alert.ends_at_text.empty() &&
      alert.ends_at < alert.starts_at) {
    return "start time must be before end time";
  }
  if (const json::value* link = object.if_contains("generatorURL")) {
    if (!link->is_string() || !boost::urls::parse_absolute_uri(link->as_string())) {
      return "generatorURL must be an absolute URI";
    }
    alert.generator_url = std::string(link->as_string());
  }
  return "";
}

}  // namespace

std::string check_postable_alerts(const json::value& body, std::vector<ReceivedAlert>& alerts) {
  if (!body.is_array()) return "the body is not an array of alerts";
  for (const json::value& item : body.as_array()) {
    ReceivedAlert alert;
    if (std::string problem = check_alert(item, alert); !problem.empty()) return problem;
    alerts.push_back(std::move(alert));
  }
  return "";
}

bool parse_rfc3339(const std::string& text, std::chrono::system_clock::time_point& time) {
  static const std::regex kDateTime(
      R"((\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|([+-])(\d{2}):(\d{2})))");
  std::smatch match;
  if (!std::regex_match(text, match, kDateTime)) return false;
  std::tm utc{};
  utc.tm_year = std::stoi(match[1]) - 1900;
  utc.tm_mon = std::stoi(match[2]) - 1;
  utc.tm_mday = std::stoi(match[3]);
  utc.tm_hour = std::stoi(match[4]);
  utc.tm_min = std::stoi(match[5]);
  utc.tm_sec = std::stoi(match[6]);
  if (utc.tm_mon > 11 || utc.tm_mday < 1 || utc.tm_mday > 31 || utc.tm_hour > 23 ||
      utc.tm_min > 59 || utc.tm_sec > 60) {
    return false;
  }
  std::int64_t seconds = ::timegm(&utc);
  if (match[9].matched) {
    const int offset = std::stoi(match[10]) * 3600 + std::stoi(match[11]) * 60;
    seconds -= match[9] == "+" ? offset : -offset;
  }
  std::chrono::nanoseconds fraction{0};
  if (match[7].matched) {
    std::string digits = match[7].str().substr(1);
    digits.resize(9, '0');
    fraction = std::chrono::nanoseconds(std::stoll(digits));
  }
  time = std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          std::chrono::seconds(seconds) + fraction));
  return true;
}

AlertmanagerReceiver::AlertmanagerReceiver() {
  http_.answer_with([this](const ReceivedRequest& request) { return answer(request); });
}

HttpAction AlertmanagerReceiver::answer(const ReceivedRequest& request) {
  const std::lock_guard lock(mutex_);
  if (!failures_.empty()) {
    const int status = failures_.front();
    failures_.erase(failures_.begin());
    return HttpAction::respond(status);
  }
  const auto refuse = [&](std::string problem) {
    problems_.push_back(problem);
    return HttpAction::respond(400).with_body(std::move(problem));
  };
  if (request.method != "POST" || request.target != "/api/v2/alerts") {
    return refuse(request.method + " " + request.target + ": not Alertmanager's alerts API");
  }
  if (request.content_type != "application/json") return refuse("not application/json");
  boost::system::error_code error;
  const json::value body = json::parse(request.body, error);
  if (error) return refuse("not JSON: " + request.body);
  AlertPost post;
  if (std::string problem = check_postable_alerts(body, post.alerts); !problem.empty()) {
    return refuse(problem + ": " + request.body);
  }
  post.received_at = std::chrono::system_clock::now();
  if (const auto found = request.headers.find("authorization"); found != request.headers.end()) {
    post.authorization = found->second;
  }
  posts_.push_back(std::move(post));
  return HttpAction::respond(200);
}

void AlertmanagerReceiver::fail_next(std::vector<int> statuses) {
  const std::lock_guard lock(mutex_);
  failures_.insert(failures_.end(), statuses.begin(), statuses.end());
}

std::string AlertmanagerReceiver::url(const std::string& userinfo) const {
  return "http://" + (userinfo.empty() ? "" : userinfo + "@") +
         "127.0.0.1:" + std::to_string(http_.port());
}

std::vector<AlertPost> AlertmanagerReceiver::posts() const {
  const std::lock_guard lock(mutex_);
  return posts_;
}

std::vector<std::string> AlertmanagerReceiver::problems() const {
  const std::lock_guard lock(mutex_);
  return problems_;
}

bool AlertmanagerReceiver::wait_for_posts(std::size_t count,
                                          std::chrono::milliseconds timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (posts().size() < count) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

}  // namespace rulestream::testing
