#include "engine/graph/rule_stage.hpp"

#include <variant>

namespace rulestream {

namespace flow = tbb::flow;

RuleStage::RuleStage(flow::graph& graph, RuleRunner& runner, flow::node_priority_t priority,
                     bool held) {
  build(graph, runner, priority);
  if (held) gate_ = std::make_unique<MessageGate<RuleMessage>>(graph, rule_input(), priority);
}

void RuleStage::build(flow::graph& graph, RuleRunner& runner, flow::node_priority_t priority) {
  if (runner.replica_count() == 1 && runner.steps_read_at_once() > 1) {
    read_ = std::make_unique<ReadNode>(
        graph, runner.steps_read_at_once(),
        [&runner](const RuleMessage& message) {
          // Only released steps come here (no time checks: see the class comment).
          const StepReady& ready = std::get<StepReady>(message);
          return Read{ready, runner.read_ahead(ready)};
        },
        priority);
    read_sequencer_ = std::make_unique<ReadSequencer>(
        graph, [](const Read& read) { return read.ready.sequence; });
    judge_ = std::make_unique<JudgeNode>(
        graph, flow::serial,
        [&runner](const Read& read) {
          runner.judge(read.ready, read.ahead);
          return flow::continue_msg();
        },
        priority);
    flow::make_edge(*read_, *read_sequencer_);
    flow::make_edge(*read_sequencer_, *judge_);
    return;
  }
  if (runner.replica_count() == 1) {
    serial_ = std::make_unique<SerialNode>(
        graph, flow::serial,
        [&runner](const RuleMessage& message) {
          runner.handle(message);
          return flow::continue_msg();
        },
        priority);
    return;
  }
  evaluate_ = std::make_unique<EvaluateNode>(
      graph, runner.replica_count(),
      [&runner](const RuleMessage& message) {
        // Only released steps come here (no time checks: see the class comment).
        const StepReady& ready = std::get<StepReady>(message);
        return Evaluated{ready, runner.evaluate_on_replica(ready)};
      },
      priority);
  sequencer_ = std::make_unique<Sequencer>(
      graph, [](const Evaluated& evaluated) { return evaluated.ready.sequence; });
  apply_ = std::make_unique<ApplyNode>(
      graph, flow::serial,
      [&runner](const Evaluated& evaluated) {
        runner.apply(evaluated.ready, evaluated.outcome);
        return flow::continue_msg();
      },
      priority);
  flow::make_edge(*evaluate_, *sequencer_);
  flow::make_edge(*sequencer_, *apply_);
}

flow::receiver<RuleMessage>& RuleStage::input() {
  if (gate_) return gate_->input();
  return rule_input();
}

flow::receiver<RuleMessage>& RuleStage::rule_input() {
  if (serial_) return *serial_;
  if (read_) return *read_;
  return *evaluate_;
}

}  // namespace rulestream
