"""The Trial API against what smdebug's own Trial reported for every sample trial: names,
steps per mode, modes, workers, step lookups, has_passed_step, filters and collections."""
import pytest

import rulestream
from conftest import trial_path
from rulestream import create_trial, modes

MODES = {"TRAIN": modes.TRAIN, "EVAL": modes.EVAL, "PREDICT": modes.PREDICT,
         "GLOBAL": modes.GLOBAL}


def test_trial_summary(sample):
    name, path, expected = sample
    trial = create_trial(str(path))
    assert trial.name == name  # the last component of the path, as smdebug names a trial
    assert trial.tensor_names() == expected["tensor_names"]
    # smdebug lists modes in a set's order; compared as sets, as the C++ suite does.
    assert sorted(m.name for m in trial.modes()) == sorted(expected["modes"])
    assert trial.workers() == expected["workers"]
    assert trial.num_workers == expected["num_workers"]
    assert trial.loaded_all_steps == expected["loaded_all_steps"]
    assert trial.last_complete_step == expected["last_complete_step"]


def test_steps_per_mode(sample):
    _, path, expected = sample
    trial = create_trial(path)
    for mode_name, steps in expected["steps"].items():
        assert trial.steps(mode=MODES[mode_name]) == steps, mode_name
    for mode_name, steps in expected["steps_incl_incomplete"].items():
        assert trial.steps(MODES[mode_name], show_incomplete_steps=True) == steps, mode_name
    # steps() without a mode is every step: smdebug's GLOBAL.
    assert trial.steps() == expected["steps"]["GLOBAL"]


def test_step_lookups(sample):
    _, path, expected = sample
    trial = create_trial(path)
    for global_step, mode_name, mode_step in expected["step_map"]:
        assert trial.mode(global_step) is MODES[mode_name]
        assert trial.mode_step(global_step) == mode_step
    for probe in expected["mode_lookup_probes"]:
        mode, mode_step = trial.mode_modestep(probe["global_step"])
        assert (mode.name if mode else None) == probe["mode"], probe
        assert mode_step == probe["mode_step"], probe
    for probe in expected["global_step_probes"]:
        assert trial.global_step(MODES[probe["mode"]], probe["mode_step"]) == \
            probe["global_step"], probe
    for probe in expected["has_passed_step"]:
        state = trial.has_passed_step(probe["step"], mode=MODES[probe["mode"]])
        assert isinstance(state, rulestream.StepState)
        assert state.name == probe["state"], probe


def test_tensor_names_filters(sample):
    _, path, expected = sample
    trial = create_trial(path)
    for key, names in expected["tensor_names_filtered"].items():
        kind, _, argument = key.partition("=")
        if kind == "step":
            assert trial.tensor_names(step=int(argument)) == names, key
        elif kind == "mode":
            assert trial.tensor_names(mode=MODES[argument]) == names, key
        elif kind == "regex":
            assert trial.tensor_names(regex=argument) == names, key
        else:
            pytest.fail("unknown filter " + key)


def test_collections(sample):
    _, path, expected = sample
    trial = create_trial(path)
    collections = trial.collections()
    assert sorted(collections) == sorted(expected["collections"])
    for name, wanted in expected["collections"].items():
        collection = trial.collection(name)
        assert collection.name == name
        assert sorted(collection.tensor_names) == sorted(wanted["tensor_names"]), name
        assert collection.include_regex == wanted["include_regex"], name
        assert collection.reduction_config.save_raw_tensor == \
            wanted["reduction_config"]["save_raw_tensor"], name
        # Both spellings of the filter: the name and the Collection object.
        assert trial.tensor_names(collection=name) == wanted["tensor_names_in_trial"], name
        assert trial.tensor_names(collection=collection) == wanted["tensor_names_in_trial"], name


def test_filters_combine_as_an_intersection():
    # seed 001: "saved for given step matching all the given arguments". pt-mlp-basic saves the
    # gradients at TRAIN steps only (mode steps 0, 5, 10, ...), the losses at every step: at
    # EVAL step 3 no gradient, at TRAIN step 5 all six, and the regex keeps those.
    from conftest import trial_path
    trial = create_trial(trial_path("pt-mlp-basic"))
    assert trial.tensor_names(step=3, mode=modes.EVAL, regex="^gradient/") == []
    gradients = trial.tensor_names(step=5, mode=modes.TRAIN, regex="^gradient/")
    assert gradients == sorted(n for n in trial.tensor_names() if n.startswith("gradient/"))
    assert len(gradients) == 6
    # A list of regexes matches any of them.
    assert trial.tensor_names(regex=["fc1.bias$", "fc3.bias$"]) == [
        "MLP_fc1.bias", "MLP_fc3.bias", "gradient/MLP_fc1.bias", "gradient/MLP_fc3.bias"]


def test_range_steps_loads_only_those_steps():
    from conftest import trial_path
    trial = create_trial(trial_path("pt-exploding"), name="window", range_steps=(5, 10))
    assert trial.name == "window"
    assert trial.steps() == [5, 6, 7, 8, 9]
    assert create_trial(trial_path("pt-exploding"), range_steps=(None, 3)).steps() == [0, 1, 2]
    assert create_trial(trial_path("pt-exploding"), range_steps=(29, None)).steps() == [29, 30, 31]


def test_a_notebook_reading_tensor_by_tensor_finds_every_file_kept():
    # pt-mlp-basic saves its 17 tensors into 200 event files (one per step). Read tensor by
    # tensor, the first tensor visits every file once (each value copied), which is enough for a
    # Python trial to keep every file for the next ones (up to 1,024; a pipeline keeps 16, and
    # most of these values would be copies again): all their values are read-only views.
    trial = create_trial(trial_path("pt-mlp-basic"))
    names = trial.tensor_names()
    first = trial.tensor(names[0])
    assert len(first.steps()) == 200
    for step in first.steps():
        first.value(step)
    for name in names[1:]:
        tensor = trial.tensor(name)
        for step in tensor.steps():
            assert not tensor.value(step).flags.writeable, (name, step)


def test_tensor_hands_out_one_object_per_name_as_smdebug():
    trial = create_trial(trial_path("pt-mlp-basic"))
    name = trial.tensor_names()[0]
    assert trial.tensor(name) is trial.tensor(name)
    # Inside no_refresh each is made for the pinned view, and reads as the kept one does.
    with rulestream.no_refresh(trial):
        pinned = trial.tensor(name)
        assert pinned is not trial.tensor(name)
        assert pinned.steps() == trial.tensor(name).steps()
    with pytest.raises(rulestream.TensorUnavailable):
        trial.tensor("no such tensor")
