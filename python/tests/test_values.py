"""Tensor values against smdebug's fingerprints of every value of every sample trial (dtype,
shape, first elements, sums, extremes, NaN/Inf counts, SHA-256 of the bytes), the default
worker, shapes, mode-relative access, and how the arrays hold their bytes."""
import gc
import hashlib
import math
import sys

import numpy as np
import pytest

from conftest import number, smdebug_lost_value, trial_path
from rulestream import create_trial, modes
import rulestream


def error_name(call):
    try:
        call()
    except rulestream.RulestreamError as e:
        return type(e).__name__
    return None


def check_fingerprint(array, wanted, where):
    assert type(array).__name__ == wanted["pytype"], where
    if wanted["dtype"].startswith("<U"):
        # smdebug's np.array of the strings; its digest is of repr(value.tolist()).
        assert array.dtype.str == wanted["dtype"], where
        assert hashlib.sha256(repr(array.tolist()).encode()).hexdigest() == \
            wanted["sha256_of_repr"], where
        assert list(array.ravel()[:4]) == wanted["first"], where
        return
    if wanted["dtype"] == "uint8" and array.dtype == np.int8:
        # rulestream reads int8 as int8; smdebug reinterprets it as uint8 (FORMAT.md, last
        # section): the same bytes, which the digest and the uint8 view check.
        array = array.view(np.uint8)
    assert array.dtype.name == wanted["dtype"], where
    assert list(array.shape) == wanted["shape"], where
    assert array.size == wanted["size"], where
    assert hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest() == \
        wanted["sha256"], where
    flat = array.ravel()
    for ours, theirs in zip(flat[:4].tolist(), wanted["first"]):
        assert ours == number(theirs) or (math.isnan(ours) and math.isnan(number(theirs))), where
    if "nan_count" in wanted:
        assert int(np.isnan(flat).sum()) == wanted["nan_count"], where
        assert int(np.isinf(flat).sum()) == wanted["inf_count"], where
    if array.size:
        assert flat.min().item() == number(wanted["min"]) or math.isnan(number(wanted["min"])), where
        assert flat.max().item() == number(wanted["max"]) or math.isnan(number(wanted["max"])), where
        total = float(flat.astype(np.float64).sum())
        wanted_sum = number(wanted["sum_f64"])
        assert total == wanted_sum or (math.isnan(total) and math.isnan(wanted_sum)), where


def test_every_value(sample):
    name, path, expected = sample
    trial = create_trial(path)
    checked = 0
    for tname, tensor_expected in expected["tensors"].items():
        tensor = trial.tensor(tname)
        assert tensor.name == tname
        for mode_name, steps in tensor_expected["steps"].items():
            assert tensor.steps(mode=getattr(modes, mode_name)) == steps, (tname, mode_name)
        for entry in tensor_expected["per_step"]:
            step = entry["step"]
            where = "{} {} step {}".format(name, tname, step)
            assert tensor.workers(step) == entry["workers"], where
            for worker, wanted in entry["by_worker"].items():
                at = where + " " + worker
                if "error" in wanted["value"]:
                    ours = error_name(lambda: tensor.value(step, worker=worker))
                    if ours is None and smdebug_lost_value(path, step, worker, tname):
                        continue  # rulestream reads what smdebug lost (test_reductions checks it)
                    assert ours == wanted["value"]["error"], at
                else:
                    check_fingerprint(tensor.value(step, worker=worker), wanted["value"], at)
                    checked += 1
                if isinstance(wanted["shape"], dict):
                    assert error_name(lambda: tensor.shape(step, worker=worker)) == \
                        wanted["shape"]["error"], at
                else:
                    assert list(tensor.shape(step, worker=worker)) == wanted["shape"], at
            if isinstance(entry.get("default_worker_value_sha"), str):
                value = tensor.value(step)
                if value.dtype.kind != "U":
                    assert hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest() == \
                        entry["default_worker_value_sha"], where
    assert checked > 0


def test_mode_relative_access_and_missing_steps(sample):
    name, path, expected = sample
    trial = create_trial(path)
    for tname, tensor_expected in expected["tensors"].items():
        tensor = trial.tensor(tname)
        for mode_name, access in tensor_expected["mode_relative_access"].items():
            where = "{} {} {} step {}".format(name, tname, mode_name, access["mode_step"])
            mode = getattr(modes, mode_name)
            error = access.get("error") or access.get("value", {}).get("error")
            if error:
                ours = error_name(lambda: tensor.value(access["mode_step"], mode=mode))
                global_step = trial.global_step(mode, access["mode_step"])
                if ours is None and global_step is not None and smdebug_lost_value(
                        path, global_step, trial.workers()[0], tname):
                    continue
                assert ours == error, where
            else:
                check_fingerprint(tensor.value(access["mode_step"], mode=mode), access["value"],
                                  where)
        for probe in tensor_expected["missing_step_probes"]:
            assert error_name(lambda: tensor.value(probe["step"])) == probe["error"], \
                (name, tname, probe)


def test_values_of_a_mode_are_every_step_of_it():
    trial = create_trial(trial_path("pt-mlp-basic"))
    loss = trial.tensor("CrossEntropyLoss_output_0")
    evaluated = loss.values(mode=modes.EVAL)
    assert sorted(evaluated) == loss.steps(mode=modes.EVAL)
    for step, value in evaluated.items():
        assert np.array_equal(value, loss.value(step, mode=modes.EVAL))
    assert sorted(loss.values()) == loss.steps()


@pytest.mark.parametrize("name", ["pt-ddp-2workers", "pt-mlp-reductions"])
def test_values_of_a_worker_are_its_value_at_every_step(name):
    # values() reads every step's record together; each entry must be what value() reads at
    # that step for the same worker, and where value() raises at some step, values() raises
    # the same exception (smdebug's values() calls value() step by step).
    trial = create_trial(trial_path(name))
    checked = raised = 0
    for tname in trial.tensor_names():
        tensor = trial.tensor(tname)
        for worker in [None] + trial.workers():
            errors = {error_name(lambda: tensor.value(s, worker=worker)) for s in tensor.steps()}
            errors.discard(None)
            if errors:
                assert error_name(lambda: tensor.values(worker=worker)) in errors, (tname, worker)
                raised += 1
                continue
            values = tensor.values(worker=worker)
            assert list(values) == tensor.steps(), (tname, worker)
            for step, value in values.items():
                wanted = tensor.value(step, worker=worker)
                assert value.dtype == wanted.dtype and value.shape == wanted.shape
                assert np.array_equal(value, wanted, equal_nan=True), (tname, worker, step)
                checked += 1
    assert checked > 0
    if name == "pt-mlp-reductions":
        assert raised > 0  # it saved only reductions of some tensors at some steps


def test_prev_steps():
    trial = create_trial(trial_path("pt-mlp-basic"))
    weights = trial.tensor("MLP_fc1.weight")
    train_steps = weights.steps(mode=modes.TRAIN)
    # The last n saves of the mode up to and including the step.
    assert weights.prev_steps(train_steps[3], 2, mode=modes.TRAIN) == train_steps[2:4]
    assert weights.prev_steps(train_steps[0], 5, mode=modes.TRAIN) == train_steps[:1]


def test_a_mapped_value_is_a_read_only_view_that_outlives_the_trial():
    trial = create_trial(trial_path("pt-mlp-basic"))
    # The first read of an event file copies the record out (pread) and the array owns that
    # copy; the storage keeps a mapping of a file read twice lately, and values read from it
    # after that are views of the mapping. Both tensors are in step 0's event file.
    first = trial.tensor("MLP_fc1.bias").value(0)
    assert first.flags.writeable and first.base is None
    value = trial.tensor("MLP_fc1.weight").value(0)
    expected = value.copy()
    assert value.base is not None  # a view: numpy did not copy the bytes
    assert not value.flags.writeable  # they are the mapped file's
    # Its base holds the mapping, and only the array holds its base: no reference leaks with
    # each value. (The three: the array's, `base`'s, and getrefcount's own argument.)
    base = value.base
    assert type(base).__name__ == "_HeldBytes"
    references = sys.getrefcount(base)
    assert references == 3
    del base
    with pytest.raises(ValueError):
        value[0, 0] = 1.0
    del trial
    gc.collect()
    # The array keeps its buffer alive: the trial and its mapping may be gone.
    assert np.array_equal(value, expected)
    assert np.array_equal(np.array(value) * 2, expected * 2)  # a copy is writable and computes


def test_reductions_of_every_saved_key_are_returned_by_reduction_values():
    expected = __import__("conftest").expected_of("pt-mlp-reductions")
    trial = create_trial(trial_path("pt-mlp-reductions"))
    seen = 0
    for tname, tensor_expected in expected["tensors"].items():
        tensor = trial.tensor(tname)
        for entry in tensor_expected["per_step"]:
            for worker, wanted in entry["by_worker"].items():
                saved = wanted.get("saved_reductions") or []
                values = tensor.reduction_values(entry["step"], worker=worker)
                keys = sorted(("abs_" if is_abs else "") + r for r, is_abs in values)
                assert keys == sorted(saved), (tname, entry["step"])
                for (reduction, is_abs), figure in values.items():
                    key = ("abs_" if is_abs else "") + reduction
                    theirs = wanted["reductions"][key]
                    assert type(figure).__name__ == theirs["pytype"]
                    assert figure.item() == number(theirs["v"])  # read, not computed: exact
                    seen += 1
    assert seen > 0
