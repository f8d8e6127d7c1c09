#include "apps/serve/job_sinks.hpp"

namespace rulestream {

CountedSink::CountedSink(std::shared_ptr<Sink> sink, ServiceMetrics& metrics,
                         bool job_waits_for_delivery)
    : sink_(std::move(sink)),
      metrics_(metrics),
      name_(sink_->describe()),
      delivers_in_write_(!sink_->delivery()),
      job_waits_for_delivery_(job_waits_for_delivery) {
  metrics_.track_sink(*sink_);
}

CountedSink::~CountedSink() {
  metrics_.untrack_sink(*sink_);
}

void CountedSink::write(const RuleEvent& event) {
  try {
    sink_->write(event);
  } catch (const std::exception&) {  // one refused event must not end the job's rules
    metrics_.add_sink_event(name_);
    metrics_.add_sink_failure(name_);
    return;
  }
  metrics_.add_sink_event(name_);
  if (delivers_in_write_) metrics_.add_synchronous_delivery(name_);
}

RegistrySink::RegistrySink(std::string job, JobRegistry& registry, ServiceMetrics& metrics)
    : job_(std::move(job)), registry_(registry), metrics_(metrics) {}

void RegistrySink::write(const RuleEvent& event) {
  registry_.record(job_, event);
  if (event.kind == RuleEvent::Kind::Status) {
    metrics_.add_evaluations(event.rule_configuration, event.rule, event.steps_evaluated);
    return;
  }
  if (event.kind == RuleEvent::Kind::IncidentResolved) {
    metrics_.add_incident_resolved(event.rule_configuration, event.rule);
    return;
  }
  metrics_.add_firing(event.rule_configuration, event.rule);
  if (event.incident && event.incident->state == IncidentNote::State::Opened) {
    metrics_.add_incident_opened(event.rule_configuration, event.rule);
  }
  if (!trial_) return;
  if (const auto arrival = trial_->step_arrival(event.global_step)) {
    metrics_.observe_event_latency(std::chrono::duration<double>(event.time - *arrival).count());
  }
}

}  // namespace rulestream
