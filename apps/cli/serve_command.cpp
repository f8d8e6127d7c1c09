// `rulestream serve`: follows every job under the roots given, and answers HTTP about them
// (apps/serve/). The command only reads its options, builds the service's sinks and runs
// until SIGINT or SIGTERM.
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/program_options.hpp>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include "apps/cli/cli.hpp"
#include "apps/cli/commands.hpp"
#include "apps/cli/path_command_line.hpp"
#include "apps/cli/rule_cli_options.hpp"
#include "apps/cli/storage_cli_options.hpp"
#include "apps/coordination/redis_endpoint.hpp"
#include "apps/serve/http_server.hpp"
#include "apps/serve/job_service.hpp"
#include "apps/serve/open_file_limit.hpp"
#include "apps/serve/serve_api.hpp"
#include "apps/serve/state_folder.hpp"
#include "core/model/exceptions.hpp"
#include "engine/graph/configuration_check.hpp"
#include "engine/graph/rules_file.hpp"
#include "engine/graph/sink_factory.hpp"
#include "engine/graph/token_file.hpp"
#include "sinks/delivery_queue.hpp"

namespace rulestream::cli {
namespace {

namespace po = boost::program_options;

// HOST:PORT, HOST an IPv4 or IPv6 address ("[::1]:8080"), PORT 0..65535 (0: any free port).
std::pair<std::string, std::uint16_t> parse_listen(const std::string& text) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    throw std::invalid_argument("--listen must be HOST:PORT, not '" + text + "'");
  }
  std::string host = text.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  const std::string port_text = text.substr(colon + 1);
  std::size_t used = 0;
  int port = -1;
  try {
    port = std::stoi(port_text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != port_text.size() || port < 0 || port > 65535) {
    throw std::invalid_argument("--listen: the port must be 0..65535, not '" + port_text + "'");
  }
  return {host, static_cast<std::uint16_t>(port)};
}

std::chrono::milliseconds seconds_option(const po::variables_map& options, const char* name) {
  const double seconds = options[name].as<double>();
  if (!(seconds > 0) || !std::isfinite(seconds) || seconds > 365.0 * 24 * 3600) {
    throw std::invalid_argument(std::string("--") + name + " must be a positive number of seconds");
  }
  return std::chrono::milliseconds(
      std::max<std::int64_t>(1, static_cast<std::int64_t>(seconds * 1000.0)));
}

}  // namespace

int run_serve(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const std::string prefix = "rulestream serve: ";
  po::options_description visible(
      "rulestream serve --jobs ROOT... [--rules FILE | --rule NAME...] [options]\n\n"
      "Follows every job under each ROOT (a local folder whose sub-folders, or an\n"
      "s3://bucket/prefix whose sub-prefixes, are smdebug trials, TensorBoard logdirs or text\n"
      "metrics), new ones as they appear, with the rules given (a job's own\n"
      "rulestream-rules.json replaces them; none given: each format's defaults), and answers\n"
      "HTTP: /livez, /readyz, /metrics\n"
      "(Prometheus), /api/jobs, /api/jobs/ID, /api/jobs/ID/events, /jobs/ID/report.\n"
      "With --coordinator, instances sharing a Redis share the jobs: each job runs on one\n"
      "instance (a lease), is taken over when that instance dies, and each of its events is\n"
      "published once (a takeover's replay included) and delivered to the service sinks at\n"
      "least once by whichever instance reads it; give every instance the same roots, rules\n"
      "and --sink list. Redis should persist (AOF): fencing counters lost with it are reused.\n"
      "Runs until SIGINT or SIGTERM. Exit status: 0 stopped, 2 an error.\n\noptions");
  visible.add_options()("help,h", "show this help")(
      "jobs", po::value<std::vector<std::string>>()->value_name("ROOT")->multitoken(),
      "folders whose sub-folders, or s3://bucket/prefix whose sub-prefixes, are jobs "
      "(repeatable)");
  add_rule_options(visible);
  visible.add_options()(
      "listen", po::value<std::string>()->value_name("HOST:PORT")->default_value("127.0.0.1:8080"),
      "where HTTP is served (port 0: any free port, said on stderr)")(
      "token-file", po::value<std::string>()->value_name("FILE"),
      "ask for 'Authorization: Bearer TOKEN' (TOKEN: the file's first line) on every path but "
      "/healthz and /readyz")(
      "sink", po::value<std::vector<std::string>>()->value_name("SPEC"),
      "stdout[:json], file:PATH, webhook:URL, slack:URL or alertmanager:URL: gets every "
      "job's events "
      "(repeatable; default none)")("idle-timeout",
                                    po::value<double>()->value_name("SECONDS")->default_value(300),
                                    "a job without new data for this long is finished")(
      "poll-interval", po::value<double>()->value_name("SECONDS")->default_value(1),
      "how often roots are scanned for new jobs and jobs looked at")(
      "max-running", po::value<std::size_t>()->value_name("N")->default_value(1000),
      "jobs followed at once (each on a thread of its own); others wait, Queued")(
      "history", po::value<std::size_t>()->value_name("N")->default_value(1000),
      "ended jobs kept in /api/jobs")(
      "events-per-job", po::value<std::size_t>()->value_name("N")->default_value(1000),
      "latest rule events kept per job")(
      "max-memory", po::value<std::size_t>()->value_name("MB")->default_value(64),
      "each job's memory for decoded values held as copies (see 'watch --help')")(
      "coordinator", po::value<std::string>()->value_name("redis://HOST:PORT[/DB]"),
      "share the jobs with the other instances using this Redis")(
      "lease-ttl", po::value<double>()->value_name("SECONDS")->default_value(15),
      "with --coordinator: a dead instance's jobs are taken over this long after its last "
      "heartbeat (renewed every third of it)")(
      "instance", po::value<std::string>()->value_name("NAME"),
      "with --coordinator: this instance's name, unique among them (default HOST:PID:RANDOM)")(
      "state-dir", po::value<std::string>()->value_name("DIR"),
      "where the service keeps what it must not lose: the dead letters of webhook and "
      "Alertmanager sinks that name no file (DIR/dead-letters.jsonl); default $STATE_DIRECTORY, "
      "else $XDG_STATE_HOME/rulestream, else ~/.local/state/rulestream");
  add_storage_options(visible);
  auto parsed = parse_path_command_line(args, visible, prefix, out, err);
  if (const int* done = std::get_if<int>(&parsed)) return *done;
  const po::variables_map& options = std::get<po::variables_map>(parsed);
  if (options.count("path")) {
    err << prefix << "unexpected argument '" << options["path"].as<std::vector<std::string>>()[0]
        << "' (roots go after --jobs)\n";
    return kExitError;
  }
  if (!options.count("jobs")) {
    err << prefix
        << "missing --jobs ROOT (a folder whose sub-folders are jobs, or an s3:// prefix)\n";
    return kExitError;
  }
  try {
    JobServiceOptions service;
    service.roots = options["jobs"].as<std::vector<std::string>>();
    PipelineConfig& base = service.base;
    read_rule_options(options, base);
    if (options.count("sink")) {
      for (const auto& argument : options["sink"].as<std::vector<std::string>>()) {
        base.sinks.push_back(parse_sink_argument(argument));
      }
    }
    base.storage = storage_options_from(options);
    base.max_memory = options["max-memory"].as<std::size_t>() << 20;
    base.poll_interval = seconds_option(options, "poll-interval");
    service.idle_timeout = seconds_option(options, "idle-timeout");
    service.max_running = options["max-running"].as<std::size_t>();
    service.history = options["history"].as<std::size_t>();
    service.events_per_job = options["events-per-job"].as<std::size_t>();
    if (service.max_running == 0) throw std::invalid_argument("--max-running must be at least 1");
    if (options.count("coordinator")) {
      CoordinatorOptions coordinator;
      coordinator.endpoint = parse_redis_url(options["coordinator"].as<std::string>());
      coordinator.lease_ttl = seconds_option(options, "lease-ttl");
      coordinator.instance = options.count("instance") ? options["instance"].as<std::string>()
                                                       : default_instance_name();
      if (coordinator.instance.empty() || coordinator.instance.find('#') != std::string::npos) {
        throw std::invalid_argument("--instance must be a non-empty name without '#'");
      }
      service.coordinator = std::move(coordinator);
    } else if (options.count("instance")) {
      throw std::invalid_argument("--instance is for --coordinator");
    }
    const auto [host, port] = parse_listen(options["listen"].as<std::string>());
    const std::string token = options.count("token-file")
                                  ? read_token_file(options["token-file"].as<std::string>(),
                                                    "--token-file", "the token file")
                                  : "";
    // A bad rule, parameter or action fails here, before any job is looked at (the check
    // builds the rules as for a trial at the first root, reading nothing: an S3 root's
    // credentials are found, or their absence said, naming the root).
    PipelineConfig checked = base;
    checked.paths = {service.roots.front()};
    check_configuration(checked);

    // Dead letters go to the service's state folder, not to whatever folder it started in.
    const std::filesystem::path state_dir =
        options.count("state-dir") ? std::filesystem::path(options["state-dir"].as<std::string>())
                                   : default_state_folder();
    if (state_dir.empty()) {
      throw std::invalid_argument(
          "--state-dir is needed: no STATE_DIRECTORY, XDG_STATE_HOME or HOME");
    }
    make_state_folder(state_dir);
    place_dead_letters(base.sinks, state_dir);
    service.state_dir = state_dir;
    std::vector<std::shared_ptr<Sink>> sinks;
    for (const auto& sink : base.sinks) sinks.push_back(make_sink(sink, out));
    // Each running job holds descriptors of its own (open_file_limit.hpp): said when raised.
    if (const std::string said = raise_open_file_limit(); !said.empty()) {
      err << prefix << said << "\n";
    }
    std::mutex log_mutex;  // jobs log from their own threads
    // Optional, to be let go of explicitly at the end (the server first), while a second
    // signal is still heard.
    std::optional<JobService> jobs;
    jobs.emplace(std::move(service), std::move(sinks), out, [&](const std::string& line) {
      std::lock_guard lock(log_mutex);
      err << prefix << line << "\n" << std::flush;
    });
    const ServeApi api(*jobs, token);
    std::optional<HttpServer> server;
    server.emplace(
        host, port, [&api](const HttpRequest& request) { return api.handle(request); },
        HttpServer::Options{.slow = &ServeApi::slow});
    {
      std::lock_guard lock(log_mutex);
      err << prefix << "listening on http://"
          << (host.find(':') != std::string::npos ? "[" + host + "]" : host) << ":"
          << server->port() << "\n"
          << std::flush;
    }
    jobs->start();
    boost::asio::io_context signals_io;
    boost::asio::signal_set signals(signals_io, SIGINT, SIGTERM);
    signals.async_wait([](const boost::system::error_code&, int) {});
    signals_io.run();  // until a signal
    {
      std::lock_guard lock(log_mutex);
      err << prefix
          << "stopping: every running job drains and reports (a second signal dead-letters "
             "what the sinks still hold, at once)\n"
          << std::flush;
    }
    // A second signal while stopping: a webhook that is down would otherwise be tried until
    // its queue's bound; it gives up now and keeps everything in its dead-letter file.
    signals.async_wait([&](const boost::system::error_code& error, int) {
      if (error) return;
      {
        std::lock_guard lock(log_mutex);
        err << prefix << "second signal: undelivered events go to the dead letters now\n"
            << std::flush;
      }
      DeliveryQueue::hurry_shutdown();
    });
    signals_io.restart();
    std::jthread second_signal([&signals_io] { signals_io.run(); });
    jobs->stop();
    // The server goes before the service it answers for; then the service's sinks close, each
    // dead-lettering within its bound what a peer that is down still holds.
    server.reset();
    jobs.reset();
    signals.cancel();  // second_signal's run() returns, and it is joined
    return kExitOk;
  } catch (const RulestreamError& error) {
    err << prefix << error.what() << "\n";
  } catch (const std::invalid_argument& error) {
    err << prefix << error.what() << "\n";
  } catch (const std::runtime_error& error) {
    err << prefix << error.what() << "\n";
  }
  return kExitError;
}

}  // namespace rulestream::cli
