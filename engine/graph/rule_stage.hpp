#pragma once

#include <tbb/flow_graph.h>

#include <memory>

#include "engine/graph/message_gate.hpp"
#include "engine/graph/rule_runner.hpp"

namespace rulestream {

// A rule's part of the pipeline's flow graph: released steps come in at input(), in release
// order (StepReady::sequence counts them from 0, with none missing), and time checks for rules
// that watch the clock.
//
// - A rule that keeps state from step to step: one serial node, RuleRunner::handle() on one
//   message at a time.
// - A rule with replicas (RuleRunner::add_replicas; rules that evaluate steps independently):
//   a node evaluating up to replica_count() steps at once, each on its own instance of the
//   rule; a sequencer putting the outcomes back in release order; and a serial node applying
//   them (RuleRunner::apply). The rule's events, problems and status are those of the serial
//   form, in the same order: only where the evaluating happens changes. Such rules watch no
//   clock, so no time check comes in.
// - A rule that reads ahead (RuleRunner::allow_reading_ahead; rules that keep state but read
//   each step on its own): a node reading up to steps_read_at_once() steps at once on the
//   rule's one instance, a sequencer, and a serial node judging them in release order
//   (RuleRunner::judge). The same events, problems and status as the serial form; no time check
//   comes in either. Readings wait in the sequencer until their turn: as many as the reading
//   runs ahead of the judging, which costs a small part of what the reading does.
//
// A stage made `held` holds its messages, in order and without holding a thread, until
// let_through() (MessageGate): the rule compares with trials that are still loading.
//
// The stage refers to `runner`, which outlives the graph.
class RuleStage {
 public:
  RuleStage(tbb::flow::graph& graph, RuleRunner& runner, tbb::flow::node_priority_t priority,
            bool held = false);
  RuleStage(const RuleStage&) = delete;
  RuleStage& operator=(const RuleStage&) = delete;

  tbb::flow::receiver<RuleMessage>& input();
  // A held stage's messages go on to the rule, those held first; any thread. Nothing for a
  // stage not held.
  void let_through() {
    if (gate_) gate_->open();
  }

 private:
  struct Evaluated {
    StepReady ready;
    StepOutcome outcome;
  };
  using SerialNode = tbb::flow::function_node<RuleMessage>;
  using EvaluateNode = tbb::flow::function_node<RuleMessage, Evaluated>;
  using Sequencer = tbb::flow::sequencer_node<Evaluated>;
  using ApplyNode = tbb::flow::function_node<Evaluated>;
  struct Read {
    StepReady ready;
    std::shared_ptr<ReadAhead> ahead;  // null: out of range
  };
  using ReadNode = tbb::flow::function_node<RuleMessage, Read>;
  using ReadSequencer = tbb::flow::sequencer_node<Read>;
  using JudgeNode = tbb::flow::function_node<Read>;

  // The rule's nodes, for its form (the class comment).
  void build(tbb::flow::graph& graph, RuleRunner& runner, tbb::flow::node_priority_t priority);
  // Where the rule's messages go in, past the gate.
  tbb::flow::receiver<RuleMessage>& rule_input();

  std::unique_ptr<SerialNode> serial_;
  std::unique_ptr<EvaluateNode> evaluate_;
  std::unique_ptr<Sequencer> sequencer_;
  std::unique_ptr<ApplyNode> apply_;
  std::unique_ptr<ReadNode> read_;
  std::unique_ptr<ReadSequencer> read_sequencer_;
  std::unique_ptr<JudgeNode> judge_;
  // Declared last: it refers to the node it holds messages for.
  std::unique_ptr<MessageGate<RuleMessage>> gate_;
};

}  // namespace rulestream
