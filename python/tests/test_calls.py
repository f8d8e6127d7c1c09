"""The hot methods (Tensor.value, workers, steps, reduction_value, Trial.tensor) bind their
arguments as a Python function with the same signature would: positionally, by keyword, with
their defaults, and with Python's TypeError for calls it would refuse. They are called past
pybind11's dispatcher (python/src/fast_calls.hpp), so these rules are checked here one by one
against a plain Python function of smdebug's signature."""
import inspect

import numpy as np
import pytest

from conftest import trial_path
from rulestream import create_trial, modes
from rulestream.exceptions import InvalidWorker, StepUnavailable

# smdebug's signatures (seed 001), as plain Python functions: what a call binds to, or whether
# Python refuses it, is asked of them.


def smdebug_value(step_num, mode=None, worker=None):
    pass


def smdebug_reduction_value(step_num, reduction_name, mode=None, worker=None, abs=False):
    pass


def python_binds(function, args, kwargs):
    try:
        bound = inspect.signature(function).bind(*args, **kwargs)
    except TypeError:
        return None
    bound.apply_defaults()
    return bound.arguments


@pytest.fixture(scope="module")
def ddp():
    return create_trial(trial_path("pt-ddp-2workers"))


def a_tensor_with_two_workers(trial):
    for name in trial.tensor_names():
        tensor = trial.tensor(name)
        for step in tensor.steps():
            if len(tensor.workers(step)) == 2:
                return tensor, step
    raise AssertionError("pt-ddp-2workers has no tensor saved by both workers")


VALUE_CALLS = [
    ((), {}),
    (("STEP",), {}),
    (("STEP", None), {}),
    (("STEP", None, "WORKER"), {}),
    (("STEP",), {"worker": "WORKER"}),
    ((), {"step_num": "STEP", "worker": "WORKER"}),
    (("STEP",), {"mode": None, "worker": "WORKER"}),
    (("STEP",), {"step_num": "STEP"}),  # repeated
    (("STEP",), {"wrker": "WORKER"}),  # unknown keyword
    (("STEP", None, "WORKER", 1), {}),  # too many
    (("STEP",), dict({"worker": "WORKER"}, mode=None)),  # keywords built at run time
]


@pytest.mark.parametrize("args,kwargs", VALUE_CALLS)
def test_value_binds_as_python_does(ddp, args, kwargs):
    tensor, step = a_tensor_with_two_workers(ddp)
    worker = tensor.workers(step)[1]  # not the default one: the argument must reach C++
    fill = {"STEP": step, "WORKER": worker}
    args = tuple(fill.get(a, a) if isinstance(a, str) else a for a in args)
    kwargs = {k: fill.get(v, v) if isinstance(v, str) else v for k, v in kwargs.items()}
    # Runtime-built keyword names are not interned: matched by value, not identity.
    kwargs = {"".join(list(k)): v for k, v in kwargs.items()}
    expected = python_binds(smdebug_value, args, kwargs)
    if expected is None:
        with pytest.raises(TypeError, match=r"value\(\)"):
            tensor.value(*args, **kwargs)
        return
    got = tensor.value(*args, **kwargs)
    wanted = tensor.value(expected["step_num"], mode=expected["mode"], worker=expected["worker"])
    assert got.dtype == wanted.dtype and got.shape == wanted.shape
    assert np.array_equal(got, wanted, equal_nan=True)


def test_worker_reaches_the_read(ddp):
    tensor, step = a_tensor_with_two_workers(ddp)
    first, second = tensor.workers(step)
    # The workers saved different values (their own batches), so each name picks its own.
    assert not np.array_equal(tensor.value(step, worker=first), tensor.value(step, worker=second))
    assert np.array_equal(tensor.value(step), tensor.value(step, worker=min(first, second)))
    with pytest.raises(InvalidWorker):
        tensor.value(step, worker="no_such_worker")


def test_argument_types(ddp):
    tensor, step = a_tensor_with_two_workers(ddp)
    # numpy integers are steps (they have __index__), as pybind11 took them; floats are not.
    assert np.array_equal(tensor.value(np.int64(step)), tensor.value(step))
    with pytest.raises(TypeError, match="step_num"):
        tensor.value(float(step))
    with pytest.raises(TypeError, match="worker"):
        tensor.value(step, worker=0)
    with pytest.raises(TypeError, match="tname"):
        ddp.tensor(0)
    with pytest.raises(OverflowError):
        tensor.value(2**70)
    with pytest.raises(StepUnavailable):
        tensor.value(10**9)
    # The descriptor belongs to Tensor: another object is refused, not misread.
    with pytest.raises(TypeError):
        type(tensor).value(ddp, step)


def test_workers_and_steps(ddp):
    tensor, step = a_tensor_with_two_workers(ddp)
    workers = tensor.workers(step)
    assert workers == tensor.workers(step_num=step) == tensor.workers(step, modes.GLOBAL)
    assert workers == sorted(ddp.workers())  # both workers, each once
    # A new list each call (a caller may change it), of the same strings.
    again = tensor.workers(step)
    assert again is not workers
    again.append("changed")
    assert tensor.workers(step) == workers
    steps = tensor.steps()
    assert steps == tensor.steps(None, False) == tensor.steps(show_incomplete_steps=False)
    assert step in steps and steps == sorted(steps)
    with pytest.raises(TypeError, match=r"steps\(\)"):
        tensor.steps(None, False, 1)


def test_reduction_value_binds_as_python_does(ddp):
    tensor, step = a_tensor_with_two_workers(ddp)
    worker = tensor.workers(step)[1]
    value = tensor.value(step, worker=worker).astype(np.float64)
    # Hand-checked against numpy: the l2 norm of the worker's own value, and of its |x|.
    assert tensor.reduction_value(step, "l2", None, worker) == pytest.approx(
        np.sqrt(np.sum(value * value)), rel=1e-5)
    assert tensor.reduction_value(step, "max", worker=worker, abs=True) == pytest.approx(
        np.max(np.abs(value)), rel=1e-6)
    calls = [((step,), {}), ((step, "l2"), {"abs": True, "worker": worker}),
             ((), {"step_num": step, "reduction_name": "min"}), ((step, "l2"), {"abs_": True})]
    for args, kwargs in calls:
        if python_binds(smdebug_reduction_value, args, kwargs) is None:
            with pytest.raises(TypeError, match=r"reduction_value\(\)"):
                tensor.reduction_value(*args, **kwargs)
        else:
            tensor.reduction_value(*args, **kwargs)


def test_signatures_are_smdebugs(ddp):
    tensor, _ = a_tensor_with_two_workers(ddp)
    assert str(inspect.signature(tensor.value)) == str(inspect.signature(smdebug_value))
    assert str(inspect.signature(tensor.reduction_value)) == str(
        inspect.signature(smdebug_reduction_value))
    assert str(inspect.signature(ddp.tensor)) == "(tname)"
