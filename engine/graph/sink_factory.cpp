#include "engine/graph/sink_factory.hpp"

#include <cmath>
#include <exception>
#include <stdexcept>
#include <utility>

#include "core/model/exceptions.hpp"
#include "engine/graph/token_file.hpp"
#include "sinks/alertmanager_sink.hpp"
#include "sinks/delivery_queue.hpp"
#include "sinks/file_sink.hpp"
#include "sinks/sink_registry.hpp"
#include "sinks/stdout_sink.hpp"
#include "sinks/webhook_sink.hpp"

namespace rulestream {
namespace {

std::unique_ptr<Sink> make_alertmanager_sink(const SinkConfig& config,
                                             std::function<bool()> may_resend) {
  const std::string where = "sink alertmanager " + redact_url(config.target);
  AlertmanagerSink::Options options;
  options.url = config.target;
  options.may_resend = std::move(may_resend);
  if (!config.dead_letter_path.empty()) options.delivery.dead_letter_path = config.dead_letter_path;
  const auto parameter = [&](const char* key) -> const std::string* {
    const auto found = config.parameters.find(key);
    return found == config.parameters.end() ? nullptr : &found->second;
  };
  if (const std::string* seconds = parameter("resend_interval")) {
    double value = 0;
    std::size_t used = 0;
    try {
      value = std::stod(*seconds, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    // At least a second: Alertmanager needs no more, and a typo must not flood it.
    if (used != seconds->size() || !std::isfinite(value) || value < 1 || value > 86400) {
      throw std::invalid_argument(where + ": resend_interval must be a number of seconds from 1 " +
                                  "to 86400, not '" + *seconds + "'");
    }
    options.resend_interval = std::chrono::milliseconds(static_cast<std::int64_t>(value * 1000));
  }
  if (const std::string* severity = parameter("severity")) options.severity = *severity;
  if (const std::string* link = parameter("generator_url")) options.generator_url = *link;
  if (const std::string* file = parameter("bearer_token_file")) {
    options.delivery.bearer_token = read_token_file(*file, where, "the bearer token file");
  }
  return std::make_unique<AlertmanagerSink>(std::move(options));
}

}  // namespace

std::unique_ptr<Sink> make_sink(const SinkConfig& config, std::ostream& out,
                                std::function<bool()> may_resend) {
  if (config.type == "stdout") {
    return std::make_unique<StdoutSink>(
        out, config.json ? StdoutSink::Format::Json : StdoutSink::Format::Text);
  }
  if (config.type == "file") return std::make_unique<FileSink>(config.target);
  if (config.type == "webhook") {
    WebhookSink::Options options;
    options.url = config.target;
    options.slack_payload = config.slack;
    if (!config.dead_letter_path.empty()) options.dead_letter_path = config.dead_letter_path;
    return std::make_unique<WebhookSink>(std::move(options));
  }
  if (config.type == "alertmanager") return make_alertmanager_sink(config, std::move(may_resend));
  if (const SinkSpec* plugin = SinkRegistry::plugins().find(config.type)) {
    std::unique_ptr<Sink> sink;
    try {
      sink = plugin->create(config.parameters);
    } catch (const RulestreamError&) {
      throw;
    } catch (const std::exception& error) {  // a plugin's own exception: named, one line
      throw std::invalid_argument("sink " + config.type + ": " + error.what());
    }
    if (!sink) throw std::invalid_argument("sink " + config.type + ": its plugin built no sink");
    return sink;
  }
  throw std::invalid_argument("unknown sink type '" + config.type + "'");
}

std::string describe_sink(const SinkConfig& config) {
  if (config.type == "stdout") return "stdout";
  if (config.type == "file") return "file " + config.target;
  if (config.type == "webhook" || config.type == "alertmanager") {
    return config.type + " " + redact_url(config.target);
  }
  return config.type + " sink";
}

}  // namespace rulestream
