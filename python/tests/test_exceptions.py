"""smdebug's exceptions where smdebug raises them, with its attributes, and clear Python errors
for arguments that make no sense."""
import pytest

from conftest import trial_path
import rulestream
from rulestream import create_trial, modes
from rulestream.exceptions import (CollectionUnavailable, InvalidWorker, NoMoreData,
                                   StepUnavailable, StorageError, TensorUnavailable,
                                   TensorUnavailableForStep)


@pytest.fixture
def basic():
    return create_trial(trial_path("pt-mlp-basic"))


def test_unknown_tensor(basic):
    with pytest.raises(TensorUnavailable) as raised:
        basic.tensor("no_such_tensor")
    assert raised.value.tname == "no_such_tensor"
    assert "no_such_tensor" in str(raised.value)
    assert not basic.has_tensor("no_such_tensor") and basic.has_tensor("MLP_fc1.weight")


def test_tensor_not_saved_at_a_saved_step(basic):
    # Gradients are saved at TRAIN mode steps 0, 5, 10, ...; global step 1 saved only losses.
    with pytest.raises(TensorUnavailableForStep) as raised:
        basic.tensor("gradient/MLP_fc1.weight").value(1)
    assert raised.value.tname == "gradient/MLP_fc1.weight"
    assert raised.value.step == 1
    assert raised.value.mode is modes.GLOBAL
    with pytest.raises(TensorUnavailableForStep):
        basic.tensor("gradient/MLP_fc1.weight").reduction_value(1, "mean", abs=True)


def test_step_past_the_end(basic):
    with pytest.raises(StepUnavailable) as raised:
        basic.tensor("CrossEntropyLoss_output_0").value(200)
    assert raised.value.step == 200 and raised.value.mode is modes.GLOBAL
    with pytest.raises(NoMoreData):
        basic.wait_for_steps([200])
    basic.wait_for_steps([0, 199])  # saved: returns at once
    assert basic.has_passed_step(200).name == "UNAVAILABLE"


def test_invalid_worker(basic):
    with pytest.raises(InvalidWorker):
        basic.tensor("MLP_fc1.weight").value(0, worker="worker_7")


def test_unknown_collection(basic):
    with pytest.raises(CollectionUnavailable) as raised:
        basic.collection("no_such_collection")
    assert isinstance(raised.value, KeyError)
    assert "no_such_collection" in str(raised.value)


def test_missing_path_is_a_storage_error(tmp_path):
    with pytest.raises(StorageError) as raised:
        create_trial(str(tmp_path / "nowhere"))
    assert isinstance(raised.value, OSError)
    assert "nowhere" in str(raised.value)
    with pytest.raises(StorageError):
        create_trial(str(tmp_path))  # a folder that holds no trial


def test_every_exception_is_a_rulestream_error_with_smdebug_text():
    error = TensorUnavailableForStep("t", 3, modes.TRAIN)
    assert isinstance(error, rulestream.RulestreamError)
    assert str(error) == ("Value for tensor t is not available for step 3 with mode TRAIN as it "
                          "was not saved.")
    met = rulestream.RuleEvaluationConditionMet("R", 7)
    assert (met.rule_name, met.step, met.end_of_rule) == ("R", 7, False)


def test_bad_arguments(basic):
    tensor = basic.tensor("MLP_fc1.weight")
    with pytest.raises(ValueError, match="not_a_reduction"):
        tensor.reduction_value(0, "not_a_reduction")
    with pytest.raises(TypeError, match="mode"):
        tensor.value(0, mode=object())
    with pytest.raises(ValueError, match="mode"):
        basic.steps(mode="SOMETIMES")
    with pytest.raises(ValueError, match="regex"):
        basic.tensor_names(regex="fc1", collection="weights")
    # A mode's name and number are accepted too.
    assert basic.steps(mode="TRAIN") == basic.steps(mode=modes.TRAIN) == basic.steps(mode=1)
