#include "pipeline/graph/sink_factory.hpp"

#include <exception>
#include <stdexcept>

#include "pipeline/model/exceptions.hpp"
#include "sinks/file_sink.hpp"
#include "sinks/sink_registry.hpp"
#include "sinks/stdout_sink.hpp"
#include "sinks/webhook_sink.hpp"

namespace rulestream {

std::unique_ptr<Sink> make_sink(const SinkConfig& config, std::ostream& out) {
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

}  // namespace rulestream
