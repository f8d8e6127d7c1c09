// `rulestream serve` as it runs: a live process on 127.0.0.1, jobs written into its root while
// it runs (the job simulators), asked over HTTP what it knows.
#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/json.hpp>
#include <filesystem>
#include <fstream>
#include <thread>

#include "apps/simulator/job_simulator.hpp"
#include "apps/simulator/tensorboard_simulator.hpp"
#include "engine/graph/rules_file.hpp"
#include "tests/support/alertmanager_receiver.hpp"
#include "tests/support/cli_runner.hpp"
#include "tests/support/http_receiver.hpp"
#include "tests/support/loopback_ports.hpp"
#include "tests/support/prometheus_text.hpp"
#include "tests/support/serve_process.hpp"
#include "tests/support/test_support.hpp"
#include "tests/support/webhook_test_support.hpp"

namespace rulestream {
namespace {

namespace json = boost::json;
using testing::find_job;
using testing::rule_of;
using testing::ServeProcess;
using testing::state_of;
using testing::TempDir;

std::uint64_t bytes_under(const std::filesystem::path& folder) {
  std::uint64_t bytes = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(folder)) {
    if (entry.is_regular_file()) bytes += entry.file_size();
  }
  return bytes;
}

// A small smdebug job, already written, whose own rules file does not parse: a broken job.
void write_broken_job(const std::filesystem::path& folder) {
  JobSimulatorOptions options;
  options.output = folder;
  options.steps = 4;
  JobSimulator(options).run();
  testing::write_text_file(folder / "rulestream-rules.json", "{\"rules\": [");
}

// A finished smdebug job at `folder` whose VanishingGradient fires from `fault_step` on.
void write_vanishing_job(const std::filesystem::path& folder, std::int64_t steps,
                         std::int64_t fault_step) {
  JobSimulatorOptions job;
  job.output = folder;
  job.scenario = JobScenario::VanishingGradients;
  job.steps = steps;
  job.fault_step = fault_step;
  JobSimulator(job).run();
}

// A finished VanishingGradients job of `steps` at `folder` whose end marker's time is set an
// hour back, as a job that ended long before serve looked; returns its fault step.
std::int64_t write_job_ended_an_hour_ago(const std::filesystem::path& folder, std::int64_t steps) {
  JobSimulatorOptions options;
  options.output = folder;
  options.scenario = JobScenario::VanishingGradients;
  options.steps = steps;
  const JobSimulator simulator(options);
  simulator.run();
  const auto marker = folder / "training_job_end.ts";
  std::filesystem::last_write_time(
      marker, std::filesystem::last_write_time(marker) - std::chrono::hours(1));
  return simulator.fault_step();
}

// A rules file running VanishingGradient with one sink.
void write_vanishing_rules(const std::filesystem::path& rules, json::object sink) {
  testing::write_text_file(
      rules, json::serialize(json::object{
                 {"rules", json::array{json::object{
                               {"RuleConfigurationName", "VanishingGradient"},
                               {"RuleParameters", {{"rule_to_invoke", "VanishingGradient"}}}}}},
                 {"sinks", json::array{std::move(sink)}}}));
}

// A webhook sink to `url`, dead-lettering into `dead_letters` (empty: naming no file).
json::object webhook_to(const std::string& url, const std::filesystem::path& dead_letters) {
  json::object sink{{"type", "webhook"}, {"url", url}};
  if (!dead_letters.empty()) sink["dead_letter_path"] = dead_letters.string();
  return sink;
}

TEST(Serve, FollowsJobsWrittenLiveAndAnswersWhereEachStands) {
  TempDir root;
  write_broken_job(root.path() / "broken");
  ServeProcess serve({"--jobs", root.path().string(), "--rule", "VanishingGradient", "--rule",
                      "NonFinite", "--idle-timeout", "2", "--poll-interval", "0.2"});
  ASSERT_NE(serve.port(), 0);

  // An smdebug job whose gradients vanish from the middle on, written while serve runs; at
  // its 10th step the writer waits until serve shows the job Running, its rules InProgress.
  JobSimulatorOptions smdebug;
  smdebug.output = root.path() / "vg";
  smdebug.scenario = JobScenario::VanishingGradients;
  smdebug.steps = 40;
  smdebug.step_delay = std::chrono::milliseconds(20);
  std::atomic<bool> seen_running{false};
  smdebug.on_step_written = [&](const SimulatedStep& step) {
    if (step.global_step != 10) return;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!seen_running && std::chrono::steady_clock::now() < deadline) {
      const json::value jobs = json::parse(testing::http_get(serve.port(), "/api/jobs").body);
      const json::object* job = find_job(jobs, "vg");
      seen_running = job && job->at("state").as_string() == "Running" &&
                     rule_of(*job, "VanishingGradient").at("status").as_string() == "InProgress";
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  };
  const JobSimulator simulator(smdebug);
  SimulationSummary written;
  std::thread smdebug_writer([&] { written = simulator.run(); });
  // A TensorBoard logdir that explodes (train/loss and train/grad_norm end in NaN), with no
  // end marker: it ends after the idle timeout.
  TensorBoardSimulatorOptions tensorboard;
  tensorboard.output = root.path() / "tb";
  tensorboard.scenario = TensorBoardScenario::Exploding;
  tensorboard.steps = 200;
  tensorboard.step_delay = std::chrono::milliseconds(2);
  TensorBoardSimulation logdir;
  std::thread tensorboard_writer([&] { logdir = simulate_tensorboard(tensorboard); });
  smdebug_writer.join();
  tensorboard_writer.join();
  EXPECT_TRUE(seen_running) << "the job never showed Running while it was written";

  ASSERT_TRUE(serve.wait_for_jobs(
      [](const json::value& jobs) {
        return state_of(jobs, "vg") == "Finished" && state_of(jobs, "tb") == "Finished" &&
               state_of(jobs, "broken") == "Error";
      },
      std::chrono::seconds(60)))
      << serve.get("/api/jobs").body << "\n"
      << serve.log();
  const json::value jobs = serve.get_json("/api/jobs");
  ASSERT_EQ(jobs.at("jobs").as_array().size(), 3u);

  // The smdebug job: every gradient is tiny from the fault step on, and each of its 40 steps
  // (0..39, all TRAIN, all saved) is read.
  const std::int64_t vanishing_steps = smdebug.steps - simulator.fault_step();
  const json::object& vg = *find_job(jobs, "vg");
  EXPECT_EQ(vg.at("format").as_string(), "smdebug");
  EXPECT_EQ(vg.at("path").as_string(), (root.path() / "vg").string());
  EXPECT_EQ(vg.at("last_step").as_int64(), smdebug.steps - 1);
  const json::object& vanishing = rule_of(vg, "VanishingGradient");
  EXPECT_EQ(vanishing.at("status").as_string(), "IssuesFound");
  EXPECT_EQ(vanishing.at("firings").as_int64(), vanishing_steps);
  EXPECT_EQ(vanishing.at("last_finding_step").as_int64(), smdebug.steps - 1);
  EXPECT_NE(vanishing.at("last_finding").as_string().find("< threshold 1e-07"), json::string::npos);
  EXPECT_EQ(rule_of(vg, "NonFinite").at("status").as_string(), "NoIssuesFound");
  EXPECT_EQ(rule_of(vg, "NonFinite").at("firings").as_int64(), 0);
  EXPECT_EQ(serve.get_json("/api/jobs/vg"), json::value(vg));

  // The logdir: NonFinite fires once for each of the two series that turn NaN; there are no
  // gradient histograms for VanishingGradient, which says so.
  const json::object& tb = *find_job(jobs, "tb");
  EXPECT_EQ(tb.at("format").as_string(), "tensorboard");
  EXPECT_EQ(tb.at("last_step").as_int64(), tensorboard.steps - 1);
  EXPECT_EQ(rule_of(tb, "NonFinite").at("status").as_string(), "IssuesFound");
  EXPECT_EQ(rule_of(tb, "NonFinite").at("firings").as_int64(), 2);
  EXPECT_EQ(rule_of(tb, "VanishingGradient").at("status").as_string(), "Error");
  EXPECT_NE(rule_of(tb, "VanishingGradient").at("message").as_string().find("gradient"),
            json::string::npos);

  // The broken job: in Error with its reason, which stalled neither of the others.
  const json::object& broken = *find_job(jobs, "broken");
  EXPECT_NE(broken.at("error").as_string().find("rulestream-rules.json"), json::string::npos)
      << json::serialize(broken);

  // The smdebug job's events, newest last: each firing in step order, then the two statuses.
  const json::value events = serve.get_json("/api/jobs/vg/events");
  const auto& list = events.at("events").as_array();
  ASSERT_EQ(static_cast<std::int64_t>(list.size()), vanishing_steps + 2);
  EXPECT_EQ(list.front().at("global_step").as_int64(), simulator.fault_step());
  EXPECT_EQ(list[list.size() - 3].at("global_step").as_int64(), smdebug.steps - 1);
  EXPECT_EQ(list[list.size() - 2].at("kind").as_string(), "status");
  EXPECT_EQ(list.back().at("kind").as_string(), "status");
  EXPECT_EQ(events.at("dropped").as_int64(), 0);

  // /metrics, read as Prometheus reads it: the figures above, counted.
  const auto scrape = serve.get("/metrics");
  EXPECT_EQ(scrape.status, 200u);
  EXPECT_EQ(scrape.content_type, "text/plain; version=0.0.4; charset=utf-8");
  const testing::PrometheusText metrics = testing::parse_prometheus_text(scrape.body);
  EXPECT_EQ(metrics.family("rulestream_jobs")->type, "gauge");
  EXPECT_EQ(metrics.value("rulestream_jobs", {{"state", "Finished"}}), 2);
  EXPECT_EQ(metrics.value("rulestream_jobs", {{"state", "Error"}}), 1);
  EXPECT_EQ(metrics.value("rulestream_jobs", {{"state", "Running"}}), 0);
  EXPECT_EQ(metrics.value("rulestream_jobs", {{"state", "Queued"}}), 0);
  EXPECT_EQ(metrics.value("rulestream_jobs_found_total"), 3);
  EXPECT_EQ(metrics.value("rulestream_steps_read_total", {{"format", "smdebug"}}), smdebug.steps);
  EXPECT_GT(metrics.value("rulestream_tensors_read_total", {{"format", "smdebug"}}), 0);
  // Only the records the rules need are read, in batches: some of the event files, never more.
  const double smdebug_bytes =
      metrics.value("rulestream_read_bytes_total", {{"format", "smdebug"}});
  EXPECT_GT(smdebug_bytes, 0);
  EXPECT_LE(smdebug_bytes, static_cast<double>(bytes_under(root.path() / "vg" / "events")));
  EXPECT_EQ(metrics.value("rulestream_values_read_total", {{"format", "tensorboard"}}),
            static_cast<double>(logdir.values));
  EXPECT_EQ(metrics.value("rulestream_read_bytes_total", {{"format", "tensorboard"}}),
            static_cast<double>(logdir.bytes));
  const std::map<std::string, std::string> vanishing_rule{
      {"rule_configuration", "VanishingGradient"}, {"rule", "VanishingGradient"}};
  const std::map<std::string, std::string> non_finite_rule{{"rule_configuration", "NonFinite"},
                                                           {"rule", "NonFinite"}};
  EXPECT_EQ(metrics.value("rulestream_rule_firings_total", vanishing_rule), vanishing_steps);
  EXPECT_EQ(metrics.value("rulestream_rule_firings_total", non_finite_rule), 2);
  // Each rule evaluates every step of the smdebug job; NonFinite also every value of the logdir.
  EXPECT_EQ(metrics.value("rulestream_rule_evaluations_total", vanishing_rule), smdebug.steps);
  EXPECT_EQ(metrics.value("rulestream_rule_evaluations_total", non_finite_rule),
            static_cast<double>(smdebug.steps + logdir.values));

  // Every firing of the smdebug job was timed from its step's landing (the logdir's are not).
  EXPECT_EQ(metrics.family("rulestream_event_latency_seconds")->type, "histogram");
  EXPECT_EQ(metrics.value("rulestream_event_latency_seconds_count"), vanishing_steps);
  EXPECT_EQ(metrics.value("rulestream_event_latency_seconds_bucket", {{"le", "+Inf"}}),
            vanishing_steps);
  double below = 0;
  for (const auto& sample : metrics.family("rulestream_event_latency_seconds")->samples) {
    if (sample.name != "rulestream_event_latency_seconds_bucket") continue;
    EXPECT_GE(sample.value, below) << "buckets are cumulative";
    below = sample.value;
  }
  EXPECT_GE(metrics.value("rulestream_event_latency_seconds_sum"), 0);

  // The job's report page, made on request; unknown paths and methods are refused.
  const auto report = serve.get("/jobs/vg/report");
  EXPECT_EQ(report.status, 200u) << report.body;
  EXPECT_EQ(report.content_type, "text/html; charset=utf-8");
  EXPECT_NE(report.body.find("VanishingGradient"), std::string::npos);
  EXPECT_EQ(serve.get("/api/jobs/nope").status, 404u);
  EXPECT_EQ(serve.get("/api/jobs/nope/events").status, 404u);
  EXPECT_EQ(serve.get("/jobs/nope/report").status, 404u);
  EXPECT_EQ(serve.get("/nothing").status, 404u);
  EXPECT_EQ(testing::http_request(serve.port(), "POST", "/api/jobs").status, 405u);
  EXPECT_EQ(testing::http_request(serve.port(), "HEAD", "/api/jobs").status, 200u);

  EXPECT_EQ(serve.stop(), 0) << serve.log();
}

TEST(Serve, FollowsAJobOfTextMetricsLikeAnyOther) {
  // A Lightning-style CSV log written row by row while serve runs, its loss NaN at step 30: a
  // job of the third format, found, followed, judged and reported as the others are.
  TempDir root;
  ServeProcess serve({"--jobs", root.path().string(), "--rule", "NonFinite", "--idle-timeout", "2",
                      "--poll-interval", "0.2"});
  ASSERT_NE(serve.port(), 0);
  const auto log = root.path() / "csv-job" / "lightning_logs" / "version_0" / "metrics.csv";
  std::filesystem::create_directories(log.parent_path());
  {
    std::ofstream out(log);
    out << "epoch,step,train_loss\n" << std::flush;
    for (int step = 0; step < 40; ++step) {
      out << step / 10 << "," << step << ","
          << (step == 30 ? "nan" : std::to_string(2.0 / (step + 1))) << "\n"
          << std::flush;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  ASSERT_TRUE(serve.wait_for_jobs(
      [](const json::value& jobs) { return state_of(jobs, "csv-job") == "Finished"; },
      std::chrono::seconds(60)))
      << serve.get("/api/jobs").body << "\n"
      << serve.log();
  const json::value jobs = serve.get_json("/api/jobs");
  const json::object& job = *find_job(jobs, "csv-job");
  EXPECT_EQ(job.at("format").as_string(), "metrics");
  EXPECT_EQ(job.at("last_step").as_int64(), 39);
  EXPECT_EQ(rule_of(job, "NonFinite").at("status").as_string(), "IssuesFound");
  EXPECT_EQ(rule_of(job, "NonFinite").at("firings").as_int64(), 1);
  EXPECT_EQ(rule_of(job, "NonFinite").at("last_finding_step").as_int64(), 30);
  const testing::PrometheusText metrics =
      testing::parse_prometheus_text(serve.get("/metrics").body);
  // 40 rows of two series (epoch, train_loss).
  EXPECT_EQ(metrics.value("rulestream_values_read_total", {{"format", "metrics"}}), 80);
  const auto report = serve.get("/jobs/csv-job/report");
  EXPECT_EQ(report.status, 200u) << report.body;
  EXPECT_NE(report.body.find("train_loss"), std::string::npos);
}

TEST(Serve, WithNoRuleNamedEachJobGetsItsFormatsDefaults) {
  // No --rule: a CSV log is judged by the default set (`rulestream rules --defaults`), an smdebug
  // job by smdebug's usual four, each job by what its format calls for.
  TempDir root;
  write_vanishing_job(root.path() / "vg", 12, 6);
  std::filesystem::create_directories(root.path() / "csv");
  testing::write_text_file(root.path() / "csv" / "metrics.csv",
                           "step,loss\n0,2.0\n1,1.5\n2,nan\n3,1.0\n");
  ServeProcess serve(
      {"--jobs", root.path().string(), "--idle-timeout", "1", "--poll-interval", "0.2"});
  ASSERT_NE(serve.port(), 0);
  ASSERT_TRUE(serve.wait_for_jobs(
      [](const json::value& jobs) {
        return state_of(jobs, "vg") == "Finished" && state_of(jobs, "csv") == "Finished";
      },
      std::chrono::seconds(60)))
      << serve.get("/api/jobs").body << "\n"
      << serve.log();
  const json::value jobs = serve.get_json("/api/jobs");
  const auto rule_names = [&](const std::string& id) {
    std::vector<std::string> names;
    for (const auto& rule : find_job(jobs, id)->at("rules").as_array()) {
      names.emplace_back(rule.at("rule_configuration").as_string());
    }
    return names;
  };
  EXPECT_EQ(rule_names("vg"), (std::vector<std::string>{"VanishingGradient", "ExplodingTensor",
                                                        "LossNotDecreasing", "AllZero"}));
  std::vector<std::string> defaults;
  for (const RuleConfig& rule : default_rule_configs()) defaults.push_back(rule.configuration_name);
  EXPECT_EQ(rule_names("csv"), defaults);
  EXPECT_EQ(rule_of(*find_job(jobs, "vg"), "VanishingGradient").at("status").as_string(),
            "IssuesFound");
  EXPECT_EQ(rule_of(*find_job(jobs, "csv"), "NonFinite").at("status").as_string(), "IssuesFound");
  EXPECT_EQ(rule_of(*find_job(jobs, "csv"), "NonFinite").at("last_finding_step").as_int64(), 2);
}

TEST(Serve, ABearerTokenGuardsEverythingButTheProbes) {
  TempDir root;
  TempDir secrets;
  const std::string token = "a-token-of-32-characters-or-so-1";
  testing::write_text_file(secrets.path() / "token", token + "\n");
  JobSimulatorOptions job;
  job.output = root.path() / "done";
  job.steps = 3;
  JobSimulator(job).run();
  ServeProcess serve({"--jobs", root.path().string(), "--rule", "NonFinite", "--token-file",
                      (secrets.path() / "token").string()});
  ASSERT_NE(serve.port(), 0);
  EXPECT_EQ(serve.get("/livez").status, 200u);
  EXPECT_EQ(serve.get("/healthz").status, 200u);  // /livez's older name
  EXPECT_EQ(serve.get("/readyz").status, 200u);
  EXPECT_EQ(testing::http_request(serve.port(), "HEAD", "/livez").status, 200u);
  for (const std::string target :
       {"/metrics", "/api/jobs", "/api/jobs/done", "/api/jobs/done/events", "/jobs/done/report"}) {
    const auto none = testing::http_get(serve.port(), target);
    EXPECT_EQ(none.status, 401u) << target;
    EXPECT_EQ(none.www_authenticate, "Bearer") << target;
    EXPECT_EQ(serve.get(target, token + "x").status, 401u) << target;
    EXPECT_EQ(serve.get(target, token.substr(1)).status, 401u) << target;
    EXPECT_EQ(testing::http_get(serve.port(), target, "Basic " + token).status, 401u) << target;
  }
  ASSERT_TRUE(serve.wait_for_jobs(
      [](const json::value& jobs) { return state_of(jobs, "done") == "Finished"; },
      std::chrono::seconds(30), token));
  for (const std::string target : {"/metrics", "/api/jobs", "/api/jobs/done/events"}) {
    const auto answer = serve.get(target, token);
    EXPECT_EQ(answer.status, 200u) << target;
    EXPECT_EQ(answer.body.find(token), std::string::npos) << target;
  }
  EXPECT_EQ(serve.log().find(token), std::string::npos);
}

TEST(Serve, SinksOfTheServiceGetEveryJobsEventsCountedAndNeverShowASecret) {
  TempDir root;
  TempDir out;
  for (const std::string name : {"one", "two"}) {
    JobSimulatorOptions job;
    job.output = root.path() / name;
    job.scenario = JobScenario::VanishingGradients;
    job.steps = 10;
    job.fault_step = 6;  // steps 6..9 fire
    JobSimulator(job).run();
  }
  const auto events = out.path() / "events.jsonl";
  // The webhook comes from the rules file (with its dead-letter file in `out`, not in the
  // working directory), the file sink from the command line: both are the service's.
  testing::HttpReceiver receiver;  // its URL's path carries a Slack-style token
  // The first event is refused twice (503, retried) then taken; the second is refused as bad
  // (400: dead-lettered at once); every other one is taken. So of the 10 events: 9 delivered,
  // 2 retries, 3 failed attempts, 1 dead letter, in 12 requests (9 taken, 3 refused).
  receiver.script({testing::HttpAction::respond(503), testing::HttpAction::respond(503),
                   testing::HttpAction::respond(200), testing::HttpAction::respond(400)});
  const auto rules = out.path() / "rules.json";
  boost::json::object webhook{{"type", "webhook"},
                              {"url", receiver.url(testing::kSecretWebhookPath)},
                              {"dead_letter_path", (out.path() / "dead-letters.jsonl").string()}};
  write_vanishing_rules(rules, webhook);
  ServeProcess serve({"--jobs", root.path().string(), "--rules", rules.string(), "--sink",
                      "file:" + events.string()});
  ASSERT_NE(serve.port(), 0);
  ASSERT_TRUE(serve.wait_for_jobs(
      [](const json::value& jobs) {
        return state_of(jobs, "one") == "Finished" && state_of(jobs, "two") == "Finished";
      },
      std::chrono::seconds(30)));
  // Each job: 4 firings and a status, to each sink. A job's end does not wait on the webhook's
  // deliveries: they settle (delivered or dead-lettered) a moment later.
  const std::map<std::string, std::string> webhook_label{
      {"sink", "webhook http://127.0.0.1:" + std::to_string(receiver.port()) + "/…"}};
  ASSERT_TRUE(testing::eventually([&] {
    const auto settled = testing::parse_prometheus_text(serve.get("/metrics").body);
    return settled.value("rulestream_sink_deliveries_total", webhook_label) +
               settled.value("rulestream_sink_dead_letters_total", webhook_label) ==
           10;
  }));
  const auto scrape = serve.get("/metrics").body;
  EXPECT_EQ(scrape.find(testing::kSecretToken), std::string::npos) << scrape;
  const auto metrics = testing::parse_prometheus_text(scrape);
  EXPECT_EQ(metrics.value("rulestream_sink_events_total", {{"sink", "file " + events.string()}}),
            10);
  const auto* sinks = metrics.family("rulestream_sink_events_total");
  ASSERT_EQ(sinks->samples.size(), 2u);
  for (const auto& sample : sinks->samples) EXPECT_EQ(sample.value, 10) << sample.labels.at("sink");
  const std::map<std::string, std::string> file_label{{"sink", "file " + events.string()}};
  EXPECT_EQ(metrics.value("rulestream_sink_deliveries_total", webhook_label), 9);
  EXPECT_EQ(metrics.value("rulestream_sink_retries_total", webhook_label), 2);
  EXPECT_EQ(metrics.value("rulestream_sink_failures_total", webhook_label), 3);
  EXPECT_EQ(metrics.value("rulestream_sink_dead_letters_total", webhook_label), 1);
  EXPECT_EQ(metrics.value("rulestream_sink_deliveries_total", file_label), 10);
  EXPECT_EQ(metrics.value("rulestream_sink_failures_total", file_label), 0);
  EXPECT_EQ(metrics.value("rulestream_sink_dead_letters_total", file_label), 0);
  EXPECT_EQ(serve.get("/api/jobs").body.find(testing::kSecretToken), std::string::npos);
  EXPECT_EQ(serve.stop(), 0);
  const std::string written = testing::read_text_file(events);
  EXPECT_EQ(std::count(written.begin(), written.end(), '\n'), 10) << written;
  EXPECT_EQ(receiver.requests().size(), 12u);
  EXPECT_EQ(testing::read_json_lines(out.path() / "dead-letters.jsonl").size(), 1u);
  EXPECT_EQ(serve.log().find(testing::kSecretToken), std::string::npos) << serve.log();
}

// A webhook whose host is down does not hold the jobs: each ends as soon as it is read, its
// events page says how many of its events are still queued, and the service stops within the
// queue's bound, dead-lettering the rest. Before, each job stayed Running until every event
// was retried to the end (2.2 s an event), and so did SIGTERM.
TEST(Serve, AWebhookThatCannotBeReachedHoldsNoJob) {
  TempDir root;
  TempDir out;
  write_vanishing_job(root.path() / "vg", 30, 6);  // 24 firings and a status
  const auto rules = out.path() / "rules.json";
  const auto dead_letters = out.path() / "dead-letters.jsonl";
  // A port nothing listens on: every attempt is refused, and retried with backoff.
  write_vanishing_rules(
      rules, webhook_to("http://127.0.0.1:" + std::to_string(testing::free_port()) + "/hook",
                        dead_letters));
  const auto started = std::chrono::steady_clock::now();
  ServeProcess serve({"--jobs", root.path().string(), "--rules", rules.string()});
  ASSERT_NE(serve.port(), 0);
  ASSERT_TRUE(serve.wait_for_jobs(
      [](const json::value& jobs) { return state_of(jobs, "vg") == "Finished"; },
      std::chrono::seconds(20)))
      << serve.get("/api/jobs").body << "\n"
      << serve.log();
  // 25 events at about 3 s each of refused attempts and backoff would be over a minute.
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(20));
  const json::value events = serve.get_json("/api/jobs/vg/events");
  EXPECT_GT(events.at("undelivered").as_int64(), 0) << json::serialize(events);
  EXPECT_LE(events.at("undelivered").as_int64(), 25);
  const auto stopping = std::chrono::steady_clock::now();
  EXPECT_EQ(serve.stop(), 0) << serve.log();
  // The queue's bound at shutdown: max_attempts (5) failed attempts in all, then the rest
  // dead-lettered.
  EXPECT_LT(std::chrono::steady_clock::now() - stopping, std::chrono::seconds(30));
  EXPECT_EQ(testing::read_json_lines(dead_letters).size(), 25U);
}

// A webhook whose host takes connections and never answers: each attempt waits out its 5 s
// timeout, so closing the queue takes up to 5 attempts (25 s). A second SIGTERM says "now":
// what the queue holds is dead-lettered at once (after the attempt in flight).
TEST(Serve, ASecondSignalDeadLettersWhatADeadPeerHoldsAtOnce) {
  TempDir root;
  TempDir out;
  write_vanishing_job(root.path() / "vg", 10, 6);  // 4 firings and a status
  boost::asio::io_context io;
  // Listening, never accepting: connections sit in the kernel's backlog, unanswered.
  boost::asio::ip::tcp::acceptor silent(
      io, boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
  const auto rules = out.path() / "rules.json";
  // Naming no dead-letter file: they go to the service's state folder (--state-dir), not to
  // the folder it was started from.
  write_vanishing_rules(
      rules,
      webhook_to("http://127.0.0.1:" + std::to_string(silent.local_endpoint().port()) + "/hook",
                 {}));
  ServeProcess serve({"--jobs", root.path().string(), "--rules", rules.string()});
  ASSERT_NE(serve.port(), 0);
  ASSERT_TRUE(serve.wait_for_jobs(
      [](const json::value& jobs) { return state_of(jobs, "vg") == "Finished"; },
      std::chrono::seconds(20)));
  const auto stopping = std::chrono::steady_clock::now();
  EXPECT_EQ(serve.stop_twice(std::chrono::milliseconds(500)), 0) << serve.log();
  // The attempt in flight may wait out its timeout (5 s); nothing after it is tried.
  EXPECT_LT(std::chrono::steady_clock::now() - stopping, std::chrono::seconds(12));
  EXPECT_EQ(testing::read_json_lines(serve.state_dir() / "dead-letters.jsonl").size(), 5U)
      << serve.log();
  EXPECT_FALSE(std::filesystem::exists("rulestream-dead-letters.jsonl"));
  EXPECT_NE(serve.log().find("second signal"), std::string::npos) << serve.log();
}

TEST(Serve, RaisesAnAlertInAlertmanagerWhileARuleFiresAndResolvesItWhenTheJobEnds) {
  TempDir root;
  TempDir out;
  JobSimulatorOptions healthy;  // no rule fires: no alert
  healthy.output = root.path() / "healthy";
  healthy.steps = 10;
  JobSimulator(healthy).run();

  testing::AlertmanagerReceiver alertmanager;
  alertmanager.fail_next({503});  // the first POST is retried once
  const auto rules = out.path() / "rules.json";
  write_vanishing_rules(rules,
                        {{"type", "alertmanager"},
                         {"url", alertmanager.url()},
                         {"resend_interval", 1},
                         {"severity", "critical"},
                         {"dead_letter_path", (out.path() / "dead-letters.jsonl").string()}});
  ServeProcess serve(
      {"--jobs", root.path().string(), "--rules", rules.string(), "--poll-interval", "0.2"});
  ASSERT_NE(serve.port(), 0);

  // Written live: gradients vanish from step 10 on, and the 30 steps after it take at least
  // 3 s to write, so the alert fires for well over the 1 s resend interval before the end.
  JobSimulatorOptions vg;
  vg.output = root.path() / "vg";
  vg.scenario = JobScenario::VanishingGradients;
  vg.steps = 40;
  vg.fault_step = 10;
  vg.step_delay = std::chrono::milliseconds(100);
  JobSimulator(vg).run();
  ASSERT_TRUE(serve.wait_for_jobs(
      [](const json::value& jobs) {
        return state_of(jobs, "vg") == "Finished" && state_of(jobs, "healthy") == "Finished";
      },
      std::chrono::seconds(60)))
      << serve.get("/api/jobs").body << "\n"
      << serve.log();

  EXPECT_TRUE(alertmanager.problems().empty()) << alertmanager.problems().front();
  const auto posts = alertmanager.posts();
  ASSERT_GE(posts.size(), 3u) << "a new alert, a resend at least, and its resolve";
  const std::map<std::string, std::string> labels{{"alertname", "VanishingGradient"},
                                                  {"training_job", "vg"},
                                                  {"rule", "VanishingGradient"},
                                                  {"rule_configuration", "VanishingGradient"},
                                                  {"severity", "critical"}};
  for (const auto& post : posts) {
    ASSERT_EQ(post.alerts.size(), 1u);  // only vg's rule ever fired
    EXPECT_EQ(post.alerts[0].labels, labels);
    EXPECT_EQ(post.alerts[0].starts_at_text, posts[0].alerts[0].starts_at_text);
  }
  // Firing in every POST but the last, each valid beyond the moment it arrived; the last
  // resolves it, ended by the time it arrived, with the rule's final status.
  EXPECT_EQ(posts[0].alerts[0].annotations.at("step"), "10");
  for (std::size_t i = 0; i + 1 < posts.size(); ++i) {
    EXPECT_GT(posts[i].alerts[0].ends_at, posts[i].received_at) << "POST " << i;
    EXPECT_EQ(posts[i].alerts[0].annotations.count("status"), 0u) << "POST " << i;
  }
  const testing::ReceivedAlert& resolved = posts.back().alerts[0];
  EXPECT_LE(resolved.ends_at, posts.back().received_at);
  EXPECT_EQ(resolved.annotations.at("status"), "IssuesFound");
  EXPECT_EQ(resolved.annotations.at("firings"), "30");  // steps 10..39

  const auto metrics = testing::parse_prometheus_text(serve.get("/metrics").body);
  const std::map<std::string, std::string> sink{
      {"sink", "alertmanager http://127.0.0.1:" + std::to_string(alertmanager.port()) + "/…"}};
  EXPECT_EQ(metrics.value("rulestream_sink_deliveries_total", sink),
            static_cast<double>(posts.size()));
  EXPECT_EQ(metrics.value("rulestream_sink_retries_total", sink), 1);
  EXPECT_EQ(metrics.value("rulestream_sink_failures_total", sink), 1);
  EXPECT_EQ(metrics.value("rulestream_sink_dead_letters_total", sink), 0);
  EXPECT_EQ(serve.stop(), 0);
  EXPECT_FALSE(std::filesystem::exists(out.path() / "dead-letters.jsonl"));
}

TEST(Serve, AJobsOwnRulesFileReplacesTheRulesAndAJobWithoutEndMarkerEndsWhenIdle) {
  TempDir root;
  JobSimulatorOptions job;
  job.output = root.path() / "own";
  job.scenario = JobScenario::VanishingGradients;
  job.steps = 10;
  job.fault_step = 6;
  job.write_end_marker = false;  // only the idle timeout ends it
  JobSimulator(job).run();
  testing::write_text_file(root.path() / "own" / "rulestream-rules.json",
                           R"({"rules": [{"RuleConfigurationName": "Tiny",
                                          "RuleParameters": {"rule_to_invoke": "VanishingGradient",
                                                             "threshold": "1e-12"}}]})");
  ServeProcess serve({"--jobs", root.path().string(), "--rule", "NonFinite", "--idle-timeout", "1",
                      "--poll-interval", "0.2"});
  ASSERT_NE(serve.port(), 0);
  ASSERT_TRUE(serve.wait_for_jobs(
      [](const json::value& jobs) { return state_of(jobs, "own") == "Finished"; },
      std::chrono::seconds(30)))
      << serve.get("/api/jobs").body;
  const json::value jobs = serve.get_json("/api/jobs");
  const json::object& own = *find_job(jobs, "own");
  // Its own rule only, with its own threshold: the vanished gradients (abs mean ~1e-10) are
  // above 1e-12, so it finds nothing; NonFinite, the service's rule, does not run on it.
  ASSERT_EQ(own.at("rules").as_array().size(), 1u) << json::serialize(own);
  EXPECT_EQ(rule_of(own, "Tiny").at("rule").as_string(), "VanishingGradient");
  EXPECT_EQ(rule_of(own, "Tiny").at("status").as_string(), "NoIssuesFound");
  EXPECT_EQ(own.at("last_step").as_int64(), job.steps - 1);
  EXPECT_EQ(serve.stop(), 0);
}

// A job that had ended an hour before serve found it (its end marker's time set back) is
// replayed rather than followed: the same statuses, firings and steps read as a follow gives
// (every gradient tiny from the fault step on, each of the 40 steps read once).
TEST(Serve, AnArchivedJobIsReplayedWithWhatAFollowFinds) {
  TempDir root;
  constexpr std::int64_t kSteps = 40;
  const std::int64_t fault_step = write_job_ended_an_hour_ago(root.path() / "archived", kSteps);
  ServeProcess serve({"--jobs", root.path().string(), "--rule", "VanishingGradient", "--rule",
                      "NonFinite", "--idle-timeout", "60", "--poll-interval", "0.2"});
  ASSERT_NE(serve.port(), 0);
  ASSERT_TRUE(serve.wait_for_jobs(
      [](const json::value& jobs) { return state_of(jobs, "archived") == "Finished"; },
      std::chrono::seconds(30)))
      << serve.get("/api/jobs").body << "\n"
      << serve.log();
  const json::value jobs = serve.get_json("/api/jobs");
  const json::object& job = *find_job(jobs, "archived");
  EXPECT_EQ(job.at("last_step").as_int64(), kSteps - 1);
  EXPECT_EQ(rule_of(job, "VanishingGradient").at("status").as_string(), "IssuesFound");
  EXPECT_EQ(rule_of(job, "VanishingGradient").at("firings").as_int64(), kSteps - fault_step);
  EXPECT_EQ(rule_of(job, "NonFinite").at("status").as_string(), "NoIssuesFound");
  EXPECT_EQ(testing::parse_prometheus_text(serve.get("/metrics").body)
                .value("rulestream_steps_read_total", {{"format", "smdebug"}}),
            kSteps);
  EXPECT_EQ(serve.stop(), 0);
}

// A finished job copied with `cp -a`: its marker lands first, with its old time kept, and the
// rest a moment later. It is no archive to replay at once (no index file yet): it is followed,
// and read once the rest lands. Before, it ended Finished with every rule in Error.
TEST(Serve, AJobCopiedMarkerFirstIsReadWhenTheRestLands) {
  TempDir source;
  TempDir root;
  constexpr std::int64_t kSteps = 20;
  const auto finished = source.path() / "copied";
  write_job_ended_an_hour_ago(finished, kSteps);
  const auto marker = finished / "training_job_end.ts";
  ServeProcess serve({"--jobs", root.path().string(), "--rule", "VanishingGradient",
                      "--idle-timeout", "60", "--poll-interval", "0.2"});
  ASSERT_NE(serve.port(), 0);
  const auto copy = root.path() / "copied";
  std::filesystem::create_directories(copy);
  std::filesystem::copy(marker, copy / "training_job_end.ts",
                        std::filesystem::copy_options::copy_symlinks);
  std::filesystem::last_write_time(copy / "training_job_end.ts",
                                   std::filesystem::last_write_time(marker));
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // past a grace of 1 s
  for (const char* folder : {"collections", "events", "index"}) {
    std::filesystem::copy(finished / folder, copy / folder,
                          std::filesystem::copy_options::recursive);
  }
  ASSERT_TRUE(serve.wait_for_jobs(
      [](const json::value& jobs) { return state_of(jobs, "copied") == "Finished"; },
      std::chrono::seconds(60)))
      << serve.get("/api/jobs").body << "\n"
      << serve.log();
  const json::value jobs = serve.get_json("/api/jobs");
  const json::object& job = *find_job(jobs, "copied");
  EXPECT_EQ(job.at("last_step").as_int64(), kSteps - 1);
  EXPECT_EQ(rule_of(job, "VanishingGradient").at("status").as_string(), "IssuesFound");
  EXPECT_EQ(serve.stop(), 0);
}

// Two jobs without their end markers, one running at a time (--max-running 1): the second
// waits, Queued, until the first has been idle for the timeout.
TEST(Serve, JobsBeyondMaxRunningWaitQueuedAndRunInTurn) {
  TempDir root;
  for (const std::string name : {"a", "b"}) {
    JobSimulatorOptions job;
    job.output = root.path() / name;
    job.steps = 5;
    job.write_end_marker = false;
    JobSimulator(job).run();
  }
  ServeProcess serve({"--jobs", root.path().string(), "--rule", "NonFinite", "--max-running", "1",
                      "--idle-timeout", "3", "--poll-interval", "0.2"});
  ASSERT_NE(serve.port(), 0);
  // The first scan finds both and starts the first (in name order); the second waits at least
  // the idle timeout after the first's last data.
  ASSERT_TRUE(
      serve.wait_for_jobs([](const json::value& jobs) { return state_of(jobs, "a") == "Running"; },
                          std::chrono::seconds(30)));
  const json::value started = serve.get_json("/api/jobs");
  EXPECT_EQ(state_of(started, "b"), "Queued") << json::serialize(started);
  EXPECT_EQ(testing::parse_prometheus_text(serve.get("/metrics").body)
                .value("rulestream_jobs", {{"state", "Queued"}}),
            1);
  ASSERT_TRUE(serve.wait_for_jobs(
      [](const json::value& jobs) {
        return state_of(jobs, "a") == "Finished" && state_of(jobs, "b") == "Finished";
      },
      std::chrono::seconds(60)));
  const json::value ended = serve.get_json("/api/jobs");
  // b started only when a had ended.
  EXPECT_GE(find_job(ended, "b")->at("ended").as_string(),
            find_job(ended, "a")->at("ended").as_string());
  EXPECT_EQ(serve.stop(), 0);
}

// SIGTERM while a job is followed: the job drains and reports, and serve exits 0.
TEST(Serve, StopsOnSigtermWhileAJobIsFollowed) {
  TempDir root;
  JobSimulatorOptions job;
  job.output = root.path() / "live";
  job.steps = 5;
  job.write_end_marker = false;
  JobSimulator(job).run();
  ServeProcess serve({"--jobs", root.path().string(), "--rule", "NonFinite", "--poll-interval",
                      "0.2"});  // the default idle timeout (300 s) keeps it running
  ASSERT_NE(serve.port(), 0);
  ASSERT_TRUE(serve.wait_for_jobs(
      [](const json::value& jobs) {
        const json::object* live = find_job(jobs, "live");
        return live && live->at("state").as_string() == "Running" &&
               live->at("last_step").is_int64() && live->at("last_step").as_int64() == 4;
      },
      std::chrono::seconds(30)))
      << serve.get("/api/jobs").body;
  EXPECT_EQ(serve.stop(), 0) << serve.log();
  EXPECT_NE(serve.log().find("stopping"), std::string::npos) << serve.log();
}

TEST(Serve, RefusesWhatItCannotServe) {
  TempDir root;
  const auto serve = [](std::vector<std::string> args) { return testing::run_cli("serve", args); };
  auto outcome = serve({"--rule", "NonFinite"});
  EXPECT_EQ(outcome.exit_code, 2);
  EXPECT_NE(outcome.err.find("missing --jobs"), std::string::npos) << outcome.err;
  outcome = serve({"--jobs", (root.path() / "absent").string(), "--rule", "NonFinite"});
  EXPECT_EQ(outcome.exit_code, 2);
  EXPECT_NE(outcome.err.find("absent: no such folder of jobs"), std::string::npos) << outcome.err;
  // Bucket names are lower case: the URI is named before any request is made.
  outcome = serve({"--jobs", "s3://Team_Bucket/jobs", "--rule", "NonFinite"});
  EXPECT_EQ(outcome.exit_code, 2);
  EXPECT_NE(outcome.err.find("s3://Team_Bucket/jobs: "), std::string::npos) << outcome.err;
  outcome = serve({"--jobs", root.path().string(), "--rule", "NonFinite", "--listen", "localhost"});
  EXPECT_EQ(outcome.exit_code, 2);
  EXPECT_NE(outcome.err.find("--listen must be HOST:PORT"), std::string::npos) << outcome.err;
  outcome = serve({"--jobs", root.path().string(), "--rule", "NoSuchRule"});
  EXPECT_EQ(outcome.exit_code, 2);
  EXPECT_NE(outcome.err.find("NoSuchRule"), std::string::npos) << outcome.err;
  outcome = serve({"--jobs", root.path().string(), "--rule", "NonFinite", "--token-file",
                   (root.path() / "no-token").string()});
  EXPECT_EQ(outcome.exit_code, 2);
  EXPECT_NE(outcome.err.find("cannot read the token file"), std::string::npos) << outcome.err;
}

}  // namespace
}  // namespace rulestream
