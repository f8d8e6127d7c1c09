#include "pipeline/graph/sink_factory.hpp"

#include <stdexcept>

#include "sinks/file_sink.hpp"
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
  throw std::invalid_argument("unknown sink type '" + config.type + "'");
}

}  // namespace rulestream
