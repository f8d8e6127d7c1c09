#include "sinks/delivery_queue.hpp"

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
#include <thread>

#include "sinks/append_file.hpp"
#include "sinks/webhook_client.hpp"

namespace rulestream {

namespace {

// Set once, by hurry_shutdown(): every queue of the process gives up on what it holds when
// closing.
std::atomic<bool>& hurry_flag() {
  static std::atomic<bool> flag{false};
  return flag;
}

}  // namespace

void DeliveryQueue::hurry_shutdown() {
  hurry_flag().store(true, std::memory_order_relaxed);
}
namespace {

std::string json_string(std::string_view text) {
  return boost::json::serialize(boost::json::string(text));
}

std::string lower_scheme(boost::core::string_view scheme) {
  std::string lower(scheme);
  std::ranges::transform(lower, lower.begin(), [](unsigned char c) { return std::tolower(c); });
  return lower;
}

void check_options(const std::string& kind, const std::string& url,
                   const DeliveryOptions& options) {
  const auto fail = [&](const std::string& what) {
    throw std::invalid_argument(kind + " " + redact_url(url) + ": " + what);
  };
  const auto parsed = boost::urls::parse_uri(url);
  if (!parsed) fail("not a valid URL");
  const std::string scheme = lower_scheme(parsed->scheme());
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

// The queue and the thread that drains it.
class DeliveryQueue::Worker {
 public:
  Worker(std::string kind, const std::string& url, const DeliveryOptions& options)
      : kind_(std::move(kind)),
        options_(options),
        redacted_url_(redact_url(url)),
        client_(url, redacted_url_, options_.timeout, options_.bearer_token),
        dead_letters_(options_.dead_letter_path),
        shutdown_failures_left_(options_.max_attempts),
        random_(std::random_device{}()) {
    thread_ = std::thread([this] { run(); });
  }

  ~Worker() {
    {
      const std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    work_ready_.notify_all();
    thread_.join();
  }

  const std::string& redacted_url() const { return redacted_url_; }
  SinkDeliveryCounts counts() const { return counters_.snapshot(); }

  void enqueue(Delivery delivery) {
    {
      const std::lock_guard lock(mutex_);
      queue_.push_back({std::move(delivery), ++enqueued_});
    }
    work_ready_.notify_one();
  }

  void flush() {
    std::unique_lock lock(mutex_);
    // Items queued after this call started are not waited for: a steady stream of them must
    // not keep flush() from returning.
    const std::uint64_t target = enqueued_;
    progress_.wait(lock, [&] { return completed_ >= target; });
  }

 private:
  struct Item {
    Delivery delivery;
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
        deliver(item.delivery);
      } catch (const std::exception& error) {
        // Only an allocation failure or the like gets here; the item is still kept, if it can
        // be (nothing may leave this thread: it would end the process).
        try {
          dead_letter(item.delivery, std::string("internal error: ") + error.what(), 0);
        } catch (const std::exception& lost) {
          std::cerr << "rulestream: " << kind_ << " " << redacted_url_
                    << ": an event was lost: " << lost.what() << "\n";
        }
      }
      if (item.delivery.on_settled) item.delivery.on_settled();
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

  void deliver(const Delivery& delivery) {
    std::string error;
    int attempts = 0;
    while (attempts < options_.max_attempts) {
      if ((shutdown_failures_left_ <= 0 || hurried()) && stopping()) {
        std::string given_up =
            hurried() ? std::string("given up at shutdown, told to hurry")
                      : "given up at shutdown after " + std::to_string(options_.max_attempts) +
                            " failed attempts in all (last: " + last_shutdown_error_ + ")";
        error = attempts == 0 ? given_up : error + "; then " + given_up;
        break;
      }
      if (attempts > 0) counters_.retried();
      const WebhookClient::Outcome outcome = client_.post(delivery.body);
      ++attempts;
      if (outcome.delivered) {
        counters_.delivered();
        return;
      }
      counters_.failed();
      error = outcome.error;
      if (stopping()) {
        --shutdown_failures_left_;
        last_shutdown_error_ = outcome.error;
      }
      if (!outcome.retryable || attempts == options_.max_attempts) break;
      wait_out(backoff(attempts, outcome));
    }
    dead_letter(delivery, error, attempts);
  }

  // A backoff, cut short when the process is told to hurry (a second signal).
  static void wait_out(std::chrono::milliseconds delay) {
    constexpr std::chrono::milliseconds kSlice{50};
    const auto until = std::chrono::steady_clock::now() + delay;
    while (!hurried()) {
      const auto now = std::chrono::steady_clock::now();
      if (now >= until) return;
      std::this_thread::sleep_for(std::min<std::chrono::nanoseconds>(kSlice, until - now));
    }
  }

  static bool hurried() { return hurry_flag().load(std::memory_order_relaxed); }

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

  void dead_letter(const Delivery& delivery, const std::string& error, int attempts) {
    counters_.dead_lettered();
    const std::string record = "{" + delivery.dead_letter_members +
                               ",\"error\":" + json_string(error) +
                               ",\"attempts\":" + std::to_string(attempts) + ",\"" + kind_ +
                               "\":" + json_string(redacted_url_) + "}\n";
    const std::string prefix = "rulestream: " + kind_ + " " + redacted_url_ + ": ";
    const std::string not_written = dead_letters_.append(record);
    if (not_written.empty()) {
      std::cerr << prefix + delivery.label + " dead-lettered after " + std::to_string(attempts) +
                       (attempts == 1 ? " attempt: " : " attempts: ") + error + "\n";
    } else {
      // The last place left: the whole record, so the event can still be recovered.
      std::cerr << prefix + delivery.label + " not delivered (" + error +
                       ") and the dead-letter file cannot be written (" + not_written +
                       "): " + record;
    }
  }

  const std::string kind_;
  const DeliveryOptions options_;
  const std::string redacted_url_;
  SinkDeliveryCounters counters_;  // added to by the worker thread, read by any

  std::mutex mutex_;
  std::condition_variable work_ready_;
  std::condition_variable progress_;
  std::deque<Item> queue_;
  std::uint64_t enqueued_ = 0;   // sequence of the last item queued
  std::uint64_t completed_ = 0;  // sequence of the last item delivered or dead-lettered
  bool stopping_ = false;

  // Worker thread only.
  WebhookClient client_;
  AppendOnDemandFile dead_letters_;
  int shutdown_failures_left_;
  std::string last_shutdown_error_;
  std::mt19937_64 random_;

  std::thread thread_;  // last: started once everything above is
};

DeliveryQueue::DeliveryQueue(std::string kind, const std::string& url,
                             const DeliveryOptions& options) {
  check_options(kind, url, options);
  worker_ = std::make_unique<Worker>(std::move(kind), url, options);
}

DeliveryQueue::~DeliveryQueue() = default;

void DeliveryQueue::enqueue(Delivery delivery) {
  worker_->enqueue(std::move(delivery));
}

void DeliveryQueue::flush() {
  worker_->flush();
}

SinkDeliveryCounts DeliveryQueue::counts() const {
  return worker_->counts();
}

const std::string& DeliveryQueue::redacted_url() const {
  return worker_->redacted_url();
}

std::string redact_url(const std::string& url) {
  const auto parsed = boost::urls::parse_uri(url);
  if (!parsed || parsed->encoded_host().empty()) return "<unparseable URL>";
  return lower_scheme(parsed->scheme()) + "://" + std::string(parsed->encoded_host_and_port()) +
         "/…";
}

}  // namespace rulestream
