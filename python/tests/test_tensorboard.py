"""create_trial on a TensorBoard logdir: every logdir of ../shared/tensorboard-samples through
the Trial API, against what an independent reader found in it (expected/<name>.json: every
value in file order, read with TensorBoard's own .proto classes).

The expected steps and values of a tensor are derived here from those raw points with
TensorBoard's rule for steps that go back (the samples' README, "Raw, not TensorBoard's view"):
a value whose step is at or below the last kept step drops every kept value at its step or
after. The samples' own `tb_view` (count, preempted, first and last step, last value) checks the
derivation."""
import json
import math

import numpy as np
import pytest

from conftest import number, require_tensorboard_samples, tensorboard_samples_dir
from rulestream import (InvalidWorker, ReductionUnsupported, TensorBoardTrial,
                        TensorUnavailable, TensorUnavailableForStep, create_trial, modes)


def logdir_names():
    expected = tensorboard_samples_dir() / "expected"
    return sorted(p.stem for p in expected.glob("*.json")) or ["<no samples>"]


@pytest.fixture(params=logdir_names())
def logdir(request):
    require_tensorboard_samples()
    name = request.param
    with open(tensorboard_samples_dir() / "expected" / (name + ".json")) as f:
        expected = json.load(f)
    return create_trial(tensorboard_samples_dir() / "logdirs" / name), expected


def tensor_name(run, tag):
    return tag if run == "." else "{}/{}".format(run, tag)


def tensorboard_view(points):
    """TensorBoard's preemption, applied to the raw points [step, wall_time, value]."""
    kept = []
    for point in points:
        while kept and kept[-1][0] >= point[0]:
            kept.pop()
        kept.append(point)
    return kept


def same_number(actual, expected):
    expected = number(expected)
    return (math.isnan(actual) and math.isnan(expected)) or actual == expected


def test_the_samples_are_there():
    require_tensorboard_samples()
    assert len(logdir_names()) >= 7


def test_a_logdir_is_a_tensorboard_trial_with_its_runs(logdir):
    trial, expected = logdir
    assert isinstance(trial, TensorBoardTrial)
    assert trial.format == "tensorboard"
    assert trial.runs() == sorted(expected["runs"])
    assert trial.modes() == [modes.GLOBAL]
    assert trial.collections() == {}


def test_every_scalar_and_histogram_tag_is_a_tensor_and_the_others_are_listed(logdir):
    trial, expected = logdir
    wanted, others = set(), set()
    for run, content in expected["runs"].items():
        for tag, found in content["tags"].items():
            if found["kind"] in ("scalar", "histogram"):
                wanted.add(tensor_name(run, tag))
            else:
                # The reader's kinds: "tensor" (an unknown plugin's tensor) is rulestream's other.
                kind = "other" if found["kind"] == "tensor" else found["kind"]
                others.add((run, tag, kind))
    assert set(trial.tensor_names()) == wanted
    assert len(trial.tensor_names()) == len(wanted)
    assert set(trial.other_tags()) == others


def test_every_scalar_value_at_every_step_as_tensorboard_shows_it(logdir):
    trial, expected = logdir
    for run, content in expected["runs"].items():
        for tag, found in content["tags"].items():
            if found["kind"] != "scalar":
                continue
            name = tensor_name(run, tag)
            view = tensorboard_view(found["points"])
            tb_view = found["tb_view"]
            assert len(view) == tb_view["count"], name
            assert len(found["points"]) - len(view) == tb_view["preempted"], name
            tensor = trial.tensor(name)
            assert tensor.kind == "scalar"
            assert tensor.steps() == [step for step, _, _ in view], name
            assert tensor.steps()[0] == tb_view["first_step"]
            assert tensor.steps()[-1] == tb_view["last_step"]
            for step, wall_time, value in view:
                read = tensor.value(step)
                assert isinstance(read, np.ndarray) and read.shape == () and \
                    read.dtype == np.float64, name
                assert same_number(float(read), value), (name, step, float(read), value)
                assert tensor.wall_time(step) == wall_time, (name, step)
            assert same_number(float(tensor.value(tensor.steps()[-1])), tb_view["last_value"])
            values = tensor.values()
            assert list(values) == tensor.steps()


def test_every_histogram_figure_at_every_step(logdir):
    trial, expected = logdir
    for run, content in expected["runs"].items():
        for tag, found in content["tags"].items():
            if found["kind"] != "histogram":
                continue
            name = tensor_name(run, tag)
            view = tensorboard_view(found["points"])
            tensor = trial.tensor(name)
            assert tensor.kind == "histogram"
            assert tensor.steps() == [step for step, _, _ in view], name
            for step, _, figures in view:
                read = tensor.histogram(step)
                if "sum_squares" in figures:
                    # A HistogramProto: its own fields.
                    for key in ("min", "max", "num", "sum", "sum_squares"):
                        assert read[key] == figures[key], (name, step, key)
                    assert read["mean"] == pytest.approx(figures["sum"] / figures["num"],
                                                         rel=1e-12)
                    variance = figures["sum_squares"] / figures["num"] - \
                        (figures["sum"] / figures["num"]) ** 2
                    assert float(tensor.reduction_value(step, "variance")) == \
                        pytest.approx(variance, rel=1e-9)
                else:
                    # A [k,3] tensor: counts summed, the outer edges of the buckets that count
                    # something, the count-weighted mean of the bucket centres.
                    assert read["num"] == figures["count"]
                    assert read["min"] == figures["min_nonempty"]
                    assert read["max"] == figures["max_nonempty"]
                    assert read["mean"] == pytest.approx(figures["mean"], rel=1e-9)
                    assert read["sum_squares"] is None
                    with pytest.raises(ReductionUnsupported):
                        tensor.reduction_value(step, "variance")
                assert float(tensor.reduction_value(step, "min")) == read["min"]
                assert float(tensor.reduction_value(step, "max")) == read["max"]
                with pytest.raises(NotImplementedError, match="histogram"):
                    tensor.value(step)


def test_steps_go_back_on_a_restart_as_in_tensorboard():
    # torch-reducer-fixtures' duplicate_steps runs write steps 0..99, then 90..199 into one
    # file: TensorBoard keeps 0..89 of the first pass and all of the second (README).
    require_tensorboard_samples()
    trial = create_trial(tensorboard_samples_dir() / "logdirs" / "torch-reducer-fixtures")
    with open(tensorboard_samples_dir() / "expected" / "torch-reducer-fixtures.json") as f:
        points = json.load(f)["runs"]["duplicate_steps/run_1"]["tags"]["dup_steps/foo"]["points"]
    tensor = trial.tensor("duplicate_steps/run_1/dup_steps/foo")
    assert tensor.steps() == list(range(200))
    # Step 95 was written twice: the second pass's value (the 106th point in file order:
    # 100 of the first pass, then steps 90..95) is the one kept.
    assert [p[0] for p in points[100:106]] == [90, 91, 92, 93, 94, 95]
    assert float(tensor.value(95)) == points[105][2]
    assert float(tensor.value(95)) != points[95][2]


def test_trial_queries_and_what_does_not_apply():
    require_tensorboard_samples()
    trial = create_trial(tensorboard_samples_dir() / "logdirs" / "tf2-katib-customloop")
    assert trial.tensor_names() == ["test/loss", "test/accuracy", "train/loss",
                                    "train/accuracy"]
    assert trial.tensor_names(regex="loss") == ["test/loss", "train/loss"]
    assert trial.tensor_names(regex=["^train", "accuracy$"]) == ["test/accuracy", "train/loss",
                                                                  "train/accuracy"]
    assert trial.tensor_names(step=9) == trial.tensor_names()
    assert trial.tensor_names(step=10) == []
    assert trial.steps() == list(range(10))
    loss = trial.tensor("train/loss")
    assert loss.run == "train" and loss.tag == "loss"
    # A scalar's reductions are numpy's on a one-element array.
    value = float(loss.value(3))
    assert float(loss.reduction_value(3, "mean")) == value
    assert float(loss.reduction_value(3, "l2")) == abs(value)
    assert float(loss.reduction_value(3, "variance")) == 0.0
    assert loss.prev_steps(5, 2) == [3, 4]
    assert loss.shape(3) == ()
    with pytest.raises(TensorUnavailableForStep):
        loss.value(10)
    with pytest.raises(TensorUnavailable):
        trial.tensor("loss")
    with pytest.raises(InvalidWorker, match="no workers"):
        loss.value(3, worker="worker_0")
    with pytest.raises(ValueError, match="global steps"):
        loss.steps(mode=modes.TRAIN)
    assert loss.steps(mode=modes.GLOBAL) == list(range(10))
    with pytest.raises(NotImplementedError, match="no workers"):
        trial.workers()
    with pytest.raises(ValueError, match="range_steps"):
        create_trial(tensorboard_samples_dir() / "logdirs" / "tf2-katib-customloop",
                     range_steps=(0, 5))


def test_broken_files_are_problems_naming_the_file_and_the_rest_is_read():
    # tbx-2018-garbage-tail: 18 files with log text after their first record.
    require_tensorboard_samples()
    trial = create_trial(tensorboard_samples_dir() / "logdirs" / "tbx-2018-garbage-tail")
    with open(tensorboard_samples_dir() / "expected" / "tbx-2018-garbage-tail.json") as f:
        files = json.load(f)["runs"]["cnn_melspec_log"]["files"]
    broken = [f["name"] for f in files if f["bad_crc"]]
    assert len(broken) == 18
    assert len(trial.problems) == len(broken)
    for name in broken:
        assert any(name in problem and "offset 25" in problem for problem in trial.problems), name
    assert len(trial.tensor("cnn_melspec_log/train/0th").steps()) == 248


def test_an_smdebug_trial_is_still_an_smdebug_trial(tmp_path):
    # A folder that holds neither kind of file yet is opened as an smdebug trial, which says
    # what is wrong.
    from rulestream import StorageError
    with pytest.raises(StorageError):
        create_trial(tmp_path)
