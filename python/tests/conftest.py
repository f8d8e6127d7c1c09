"""Shared fixtures: the sample trials of ../shared/smdebug-samples and what smdebug reported for
them (expected/<trial>.json, .rules.json). Where CI sets RULESTREAM_REQUIRE_SAMPLES=1, missing
samples fail the tests that need them instead of skipping them."""
import json
import os
import pathlib

import pytest


def samples_dir():
    configured = os.environ.get("RULESTREAM_SAMPLES") or os.environ.get("RULESTREAM_SAMPLES_DIR")
    if configured:
        return pathlib.Path(configured)
    return pathlib.Path(__file__).resolve().parents[2].parent / "shared" / "smdebug-samples"


def sample_names():
    trials = samples_dir() / "trials"
    return sorted(p.name for p in trials.iterdir()) if trials.is_dir() else []


def tensorboard_samples_dir():
    """../shared/tensorboard-samples: real TensorBoard logdirs and what an independent reader
    found in them ($RULESTREAM_TENSORBOARD_SAMPLES if set, else beside the smdebug samples)."""
    configured = os.environ.get("RULESTREAM_TENSORBOARD_SAMPLES")
    return pathlib.Path(configured) if configured else samples_dir().parent / "tensorboard-samples"


def require_folder(folder, what):
    if not folder.is_dir():
        message = "{} not found at {}".format(what, folder.parent)
        if os.environ.get("RULESTREAM_REQUIRE_SAMPLES") == "1":
            pytest.fail(message + " (RULESTREAM_REQUIRE_SAMPLES=1)")
        pytest.skip(message)


def require_samples():
    require_folder(samples_dir() / "trials", "smdebug samples")


def require_tensorboard_samples():
    require_folder(tensorboard_samples_dir() / "expected", "tensorboard samples")


# Parametrised over the samples; a single placeholder keeps the test (and its failure or skip)
# when there are none.
SAMPLES = sample_names() or ["<no samples>"]


@pytest.fixture(params=SAMPLES)
def sample(request):
    require_samples()
    name = request.param
    root = samples_dir()
    with open(root / "expected" / (name + ".json")) as f:
        expected = json.load(f)
    return name, root / "trials" / name, expected


def trial_path(name):
    require_samples()
    return samples_dir() / "trials" / name


def expected_rules(name):
    with open(samples_dir() / "expected" / (name + ".rules.json")) as f:
        return json.load(f)["rules"]


def expected_of(name):
    with open(samples_dir() / "expected" / (name + ".json")) as f:
        return json.load(f)


def number(text_or_number):
    """The expected files write NaN and infinities as strings."""
    if isinstance(text_or_number, str):
        return {"NaN": float("nan"), "Infinity": float("inf"),
                "-Infinity": float("-inf")}[text_or_number]
    return text_or_number


def smdebug_lost_value(trial_dir, step, worker, tname):
    """Whether smdebug could not read this value: its index file lists the tensor both as a
    payload and as a shape, and smdebug's reader keeps only the shape entry (FORMAT.md; the C++
    suite's tests/support/smdebug_index_peek.hpp). rulestream reads the value; where smdebug
    raised TensorUnavailableForStep for it, the tests check this is why."""
    name = "{:012d}_{}.json".format(step, worker)
    for path in pathlib.Path(trial_dir).glob("index/*/" + name):
        with open(path) as f:
            index = json.load(f)
        payloads = {entry["tensorname"] for entry in index.get("tensor_payload", [])}
        shapes = {entry["tensorname"] for entry in index.get("shape_payload", [])}
        return tname in payloads and tname in shapes
    return False
