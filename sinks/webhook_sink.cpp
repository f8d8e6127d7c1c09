#include "sinks/webhook_sink.hpp"

#include <unistd.h>

#include <algorithm>
#include <boost/json.hpp>
#include <boost/url/parse.hpp>
#include <cctype>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <iostream>
#include <mutex>
#include <random>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "sinks/append_file.hpp"
#include "sinks/webhook_client.hpp"

namespace rulestream {
namespace {

std::string json_string(std::string_view text) {
  return boost::json::serialize(boost::json::string(text));
}

// "event for rule VG at step 40": how log lines name an event without its whole JSON.
std::string event_label(const RuleEvent& event) {
  if (event.kind == RuleEvent::Kind::Status) {
    return "status event for rule " + event.rule_configuration;
  }
  return "event for rule " + event.rule_configuration + " at step " +
         std::to_string(event.global_step);
}

void check_options(const WebhookSink::Options& options, const std::string& redacted_url) {
  const auto fail = [&](const std::string& what) {
    throw std::invalid_argument("webhook " + redacted_url + ": " + what);
  };
  const auto parsed = boost::urls::parse_uri(options.url);
  if (!parsed) fail("not a valid URL");
  std::string scheme(parsed->scheme());
  std::ranges::transform(scheme, scheme.begin(), [](unsigned char c) { return std::tolower(c); });
  if (scheme != "http" && scheme != "https") fail("the URL must start with http:// or https://");
  if (parsed->encoded_host().empty()) fail("the URL has no host");
  if (options.timeout.count() <= 0) fail("the timeout must be positive");
  if (options.max_attempts < 1) fail("max_attempts must be at least 1");
  if (options.initial_backoff.count() < 0) fail("initial_backoff must not be negative");
  if (options.max_backoff < options.initial_backoff) {
    fail("max_backoff must not be less than initial_backoff");
  }
}

}  // namespace

// The queue and the thread that drains it. Events leave in the order they were written, one at
// a time: an event that is backing off holds the ones behind it until it is delivered or
// dead-lettered, which bounds how long that can be.
class WebhookSink::Worker {
 public:
  explicit Worker(Options options)
      : options_(std::move(options)),
        redacted_url_(redact(options_.url)),
        client_(options_.url, redacted_url_, options_.timeout),
        dead_letter_fd_(open_for_append(options_.dead_letter_path)),
        shutdown_failures_left_(options_.max_attempts),
        random_(std::random_device{}()) {
    try {
      thread_ = std::thread([this] { run(); });
    } catch (...) {
      ::close(dead_letter_fd_);
      throw;
    }
  }

  // Delivers what is queued, but once the sink is closing the peer gets max_attempts failed
  // attempts in all, not per event: a dead endpoint must not hold up the process's exit for
  // (queued events × attempts × timeout). What is left then goes straight to the dead letters.
  ~Worker() {
    {
      const std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    work_ready_.notify_all();
    thread_.join();
    ::close(dead_letter_fd_);
  }

  const std::string& redacted_url() const { return redacted_url_; }

  void enqueue(const RuleEvent& event) {
    Item item;
    item.event_json = event.to_json();
    if (options_.slack_payload) {
      item.body = boost::json::serialize(boost::json::object{{"text", event.to_text()}});
    }
    item.label = event_label(event);
    {
      const std::lock_guard lock(mutex_);
      item.sequence = ++enqueued_;
      queue_.push_back(std::move(item));
    }
    work_ready_.notify_one();
  }

  void flush() {
    std::unique_lock lock(mutex_);
    // Events written after this call started are not waited for: a steady stream of writes
    // must not keep flush() from returning.
    const std::uint64_t target = enqueued_;
    progress_.wait(lock, [&] { return completed_ >= target; });
  }

 private:
  struct Item {
    std::string event_json;
    std::string body;  // empty: post event_json itself
    std::string label;
    std::uint64_t sequence = 0;
  };

  void run() {
    for (;;) {
      Item item;
      {
        std::unique_lock lock(mutex_);
        work_ready_.wait(lock, [&] { return !queue_.empty() || stopping_; });
        if (queue_.empty()) return;
        item = std::move(queue_.front());
        queue_.pop_front();
      }
      try {
        deliver(item);
      } catch (const std::exception& error) {
        // Only an allocation failure or the like gets here; the event is still kept, if it can
        // be (nothing may leave this thread: it would end the process).
        try {
          dead_letter(item, std::string("internal error: ") + error.what(), 0);
        } catch (const std::exception& lost) {
          std::cerr << "rulestream: webhook " << redacted_url_
                    << ": an event was lost: " << lost.what() << "\n";
        }
      }
      {
        const std::lock_guard lock(mutex_);
        completed_ = item.sequence;
      }
      progress_.notify_all();
    }
  }

  bool stopping() {
    const std::lock_guard lock(mutex_);
    return stopping_;
  }

  void deliver(const Item& item) {
    const std::string& body = item.body.empty() ? item.event_json : item.body;
    std::string error;
    int attempts = 0;
    while (attempts < options_.max_attempts) {
      if (shutdown_failures_left_ <= 0 && stopping()) {
        std::string given_up = "given up at shutdown after " +
                               std::to_string(options_.max_attempts) +
                               " failed attempts in all (last: " + last_shutdown_error_ + ")";
        error = attempts == 0 ? given_up : error + "; then " + given_up;
        break;
      }
      const WebhookClient::Outcome outcome = client_.post(body);
      ++attempts;
      if (outcome.delivered) return;
      error = outcome.error;
      if (stopping()) {
        --shutdown_failures_left_;
        last_shutdown_error_ = outcome.error;
      }
      if (!outcome.retryable || attempts == options_.max_attempts) break;
      std::this_thread::sleep_for(backoff(attempts, outcome));
    }
    dead_letter(item, error, attempts);
  }

  // Exponential (initial × 2^(attempt-1)) with "equal jitter" (half fixed, half random), so
  // that many sinks failing together do not retry in step; a Retry-After from the server wins.
  std::chrono::milliseconds backoff(int attempts_made, const WebhookClient::Outcome& outcome) {
    if (outcome.retry_after) {
      return std::min<std::chrono::milliseconds>(*outcome.retry_after, options_.max_backoff);
    }
    auto delay = options_.initial_backoff;
    for (int i = 1; i < attempts_made && delay < options_.max_backoff; ++i) delay *= 2;
    delay = std::min(delay, options_.max_backoff);
    std::uniform_int_distribution<std::int64_t> jitter(0, delay.count() / 2);
    return delay - std::chrono::milliseconds(jitter(random_));
  }

  void dead_letter(const Item& item, const std::string& error, int attempts) {
    std::string record = "{\"event\":" + item.event_json + ",\"error\":" + json_string(error) +
                         ",\"attempts\":" + std::to_string(attempts) +
                         ",\"webhook\":" + json_string(redacted_url_) + "}\n";
    const std::string prefix = "rulestream: webhook " + redacted_url_ + ": ";
    const int write_error = append_line(dead_letter_fd_, record);
    if (write_error == 0) {
      std::cerr << prefix + item.label + " dead-lettered after " + std::to_string(attempts) +
                       (attempts == 1 ? " attempt: " : " attempts: ") + error + "\n";
    } else {
      // The last place left: the whole record, so the event can still be recovered.
      std::cerr << prefix + item.label + " not delivered (" + error +
                       ") and the dead-letter file " + options_.dead_letter_path.string() +
                       " cannot be written (" + std::generic_category().message(write_error) +
                       "): " + record;
    }
  }

  const Options options_;
  const std::string redacted_url_;
  WebhookClient client_;  // used by the worker thread only
  const int dead_letter_fd_;

  std::mutex mutex_;
  std::condition_variable work_ready_;
  std::condition_variable progress_;
  std::deque<Item> queue_;
  std::uint64_t enqueued_ = 0;   // sequence of the last event written
  std::uint64_t completed_ = 0;  // sequence of the last event delivered or dead-lettered
  bool stopping_ = false;

  // Worker thread only.
  int shutdown_failures_left_;
  std::string last_shutdown_error_;
  std::mt19937_64 random_;

  std::thread thread_;
};

WebhookSink::WebhookSink(Options options) {
  check_options(options, redact(options.url));
  worker_ = std::make_unique<Worker>(std::move(options));
}

WebhookSink::~WebhookSink() = default;

std::string WebhookSink::describe() const {
  return "webhook " + worker_->redacted_url();
}

void WebhookSink::write(const RuleEvent& event) {
  worker_->enqueue(event);
}

void WebhookSink::flush() {
  worker_->flush();
}

std::string WebhookSink::redact(const std::string& url) {
  const auto parsed = boost::urls::parse_uri(url);
  if (!parsed || parsed->encoded_host().empty()) return "<unparseable URL>";
  std::string scheme(parsed->scheme());
  std::ranges::transform(scheme, scheme.begin(), [](unsigned char c) { return std::tolower(c); });
  // Userinfo, path, query and fragment are all left out: any of them may hold the token.
  return scheme + "://" + std::string(parsed->encoded_host_and_port()) + "/…";
}

}  // namespace rulestream
