"""A job still being written: steps not yet seen, wait_for_steps blocking until they land
(with the GIL released, so another Python thread writes the files meanwhile), and the end of the
job turning waiting into NoMoreData."""
import shutil
import signal
import threading
import time

import pytest

from conftest import trial_path
import rulestream
from rulestream import create_trial, modes
from rulestream.exceptions import NoMoreData, StepNotYetAvailable

LAST = "000000000199"  # pt-mlp-basic's last step, in smdebug's file names


def copy_without_last_step(source, target):
    held = []
    for path in sorted(source.rglob("*")):
        if not path.is_file() or path.name == "training_job_end.ts":
            continue
        destination = target / path.relative_to(source)
        if LAST in path.name and "index" in path.parts:
            held.append((path, destination))  # the index file is what makes a step seen
            continue
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, destination)
    return held


def test_waiting_for_a_step_while_another_thread_writes_it(tmp_path):
    source = trial_path("pt-mlp-basic")
    held = copy_without_last_step(source, tmp_path)
    assert held
    trial = create_trial(str(tmp_path))
    assert 199 not in trial.steps()
    assert trial.has_passed_step(199).name == "NOT_YET_AVAILABLE"
    with pytest.raises(StepNotYetAvailable):
        trial.tensor("CrossEntropyLoss_output_0").value(199)

    finished = threading.Event()
    failure = []

    def wait():
        try:
            trial.wait_for_steps([199])
        except Exception as e:  # noqa: BLE001 - reported below
            failure.append(e)
        finished.set()

    waiter = threading.Thread(target=wait)
    waiter.start()
    # This thread runs while the waiter is inside C++: if wait_for_steps held the GIL, the
    # files below would never be written and the waiter would never return.
    assert not finished.wait(0.5)
    for path, destination in held:
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, destination)
    assert finished.wait(30), "wait_for_steps did not return once the step landed"
    waiter.join()
    assert failure == []
    assert trial.has_passed_step(199).name == "AVAILABLE"
    assert trial.tensor("CrossEntropyLoss_output_0").value(199).shape == ()

    # The end marker: waiting past the last step ends in NoMoreData.
    shutil.copy(source / "training_job_end.ts", tmp_path / "training_job_end.ts")
    with pytest.raises(NoMoreData):
        trial.wait_for_steps([200], mode=modes.GLOBAL)


def test_no_refresh_and_a_rules_invocation_see_the_trial_as_it_was(tmp_path):
    # smdebug evaluates a rule's step under no_refresh: files landing meanwhile are not seen
    # until the block ends.
    held = copy_without_last_step(trial_path("pt-mlp-basic"), tmp_path)
    trial = create_trial(str(tmp_path))
    seen_inside = []

    class LandsAStepMidway(rulestream.Rule):
        def invoke_at_step(self, step):
            for path, destination in held:
                destination.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(path, destination)
            seen_inside.append(199 in self.base_trial.steps())
            return False

    LandsAStepMidway(trial).invoke(0)
    assert seen_inside == [False]  # the step landed during the invocation: not seen in it
    assert 199 in trial.steps()  # and seen once it is over



def test_no_refresh_blocks_nest_and_hold_the_view_until_the_outer_one_ends(tmp_path):
    held = copy_without_last_step(trial_path("pt-mlp-basic"), tmp_path)
    trial = create_trial(str(tmp_path))
    with rulestream.no_refresh(trial):
        with rulestream.no_refresh([trial]):
            for path, destination in held:
                destination.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(path, destination)
            assert 199 not in trial.steps()
        assert 199 not in trial.steps()  # the outer block still holds the view
    assert 199 in trial.steps()


class Interrupted(Exception):
    pass


def test_a_wait_on_a_live_job_can_be_interrupted(tmp_path):
    # Ctrl-C in a notebook: Python's signal handlers run while wait_for_steps waits in C++.
    copy_without_last_step(trial_path("pt-mlp-basic"), tmp_path)
    trial = create_trial(str(tmp_path))

    def interrupt(signum, frame):
        raise Interrupted()

    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.3)
        started = time.monotonic()
        with pytest.raises(Interrupted):
            trial.wait_for_steps([199])
        assert time.monotonic() - started < 10
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    with rulestream.no_refresh(trial), pytest.raises(StepNotYetAvailable):
        trial.wait_for_steps([199])  # a pinned view answers at once
