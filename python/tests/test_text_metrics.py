"""create_trial on a folder of text metrics (trainer_state.json, CSV logs, JSON lines): every job
of tests/data/text-metrics through the Trial API, against what an independent reader (Python's
csv and json modules: tests/data/text-metrics/read_expected.py) found in it. A tensor is a run's
series, named "<run>/<column>"; its steps are TensorBoard's view of the points (a step that goes
back drops the kept values at or after it), as for a logdir."""
import json
import math
import pathlib

import pytest

from rulestream import TensorBoardTrial, create_trial

SAMPLES = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "text-metrics"


def sample_names():
    return sorted(p.stem for p in (SAMPLES / "expected").glob("*.json"))


def number(value):
    if value is None:
        return math.nan
    return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}.get(value, value)


def same_number(actual, expected):
    expected = number(expected)
    return (math.isnan(actual) and math.isnan(expected)) or actual == expected


def kept_as_tensorboard_keeps(points):
    kept = []
    for point in points:
        while kept and kept[-1][0] >= point[0]:
            kept.pop()
        kept.append(point)
    return kept


def test_the_samples_are_there():
    assert len(sample_names()) >= 12


@pytest.mark.parametrize("name", sample_names())
def test_every_series_of_every_sample_is_a_tensor_with_its_values(name):
    with open(SAMPLES / "expected" / (name + ".json")) as f:
        expected = json.load(f)
    trial = create_trial(SAMPLES / "jobs" / name)
    assert isinstance(trial, TensorBoardTrial)
    names = set(trial.tensor_names())
    for run, content in expected["runs"].items():
        for tag, found in content["tags"].items():
            tensor_name = "{}/{}".format(run, tag)
            assert tensor_name in names, tensor_name
            tensor = trial.tensor(tensor_name)
            view = kept_as_tensorboard_keeps(found["points"])
            assert tensor.steps() == [step for step, _, _ in view], tensor_name
            for step, wall_time, value in view:
                assert same_number(float(tensor.value(step)), value), (tensor_name, step)
                assert same_number(tensor.wall_time(step), wall_time), (tensor_name, step)
