#include "tests/support/rule_outcomes.hpp"

#include "core/model/exceptions.hpp"

namespace rulestream::testing {

RecordedRun run_recording_outcomes(Rule& rule, std::int64_t start_step,
                                   std::optional<std::int64_t> end_step) {
  RecordedRun run;
  for (std::int64_t step = start_step; !end_step || step < *end_step; ++step) {
    try {
      rule.invoke(step);
      run.per_step_outcome[step] = "False";
    } catch (const RuleEvaluationConditionMet&) {
      run.per_step_outcome[step] = "True";
      run.triggered_steps.push_back(step);
    } catch (const TensorUnavailableForStep&) {
      run.per_step_outcome[step] = "TensorUnavailableForStep";
    } catch (const StepUnavailable&) {
      run.per_step_outcome[step] = "StepUnavailable";
    } catch (const TensorUnavailable&) {
      run.per_step_outcome[step] = "TensorUnavailable";
    } catch (const NoMoreData&) {
      run.per_step_outcome[step] = "NoMoreData";
      run.ended_with = "NoMoreData";
      break;
    }
  }
  return run;
}

}  // namespace rulestream::testing
