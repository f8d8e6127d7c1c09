"""create_trial("s3://bucket/prefix"): a sample trial uploaded to moto's S3 server reads as the
same folder does. Needs a python3 on PATH that imports moto and boto3 (the S3 tests' server,
see .ci/run); without one the test is skipped, or fails where RULESTREAM_REQUIRE_S3_SERVER=1."""
import os
import shutil
import socket
import subprocess

import numpy as np
import pytest

from conftest import trial_path
from rulestream import create_trial, modes

# Runs in the python3 that has moto: serves S3 on the given port, uploads the trial under
# s3://samples/jobs/<name>/, says "ready", and serves until its stdin closes.
SERVER = r"""
import pathlib, sys, boto3
from moto.server import ThreadedMotoServer
port, root, name = int(sys.argv[1]), pathlib.Path(sys.argv[2]), sys.argv[3]
server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
server.start()
s3 = boto3.client("s3", endpoint_url="http://127.0.0.1:%d" % port, region_name="us-east-1")
s3.create_bucket(Bucket="samples")
for path in sorted(root.rglob("*")):
    if path.is_file():
        s3.upload_file(str(path), "samples", "jobs/%s/%s" % (name, path.relative_to(root).as_posix()))
print("ready", flush=True)
sys.stdin.read()
server.stop()
"""


def python_with_moto():
    python = shutil.which("python3")
    if python and subprocess.run([python, "-c", "import moto.server, boto3"],
                                 capture_output=True).returncode == 0:
        return python
    message = "no python3 on PATH imports moto.server and boto3"
    if os.environ.get("RULESTREAM_REQUIRE_S3_SERVER") == "1":
        pytest.fail(message + " (RULESTREAM_REQUIRE_S3_SERVER=1)")
    pytest.skip(message)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def s3_trial(monkeypatch):
    local = trial_path("pt-mlp-basic")
    python = python_with_moto()
    port = free_port()
    credentials = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                   "AWS_REGION": "us-east-1", "AWS_ENDPOINT_URL": "http://127.0.0.1:%d" % port}
    server = subprocess.Popen([python, "-c", SERVER, str(port), str(local), local.name],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                              env=dict(os.environ, **credentials))
    try:
        assert server.stdout.readline().strip() == "ready"
        for key, value in credentials.items():
            monkeypatch.setenv(key, value)
        monkeypatch.delenv("AWS_PROFILE", raising=False)
        yield local, "s3://samples/jobs/" + local.name
    finally:
        server.stdin.close()
        server.wait(timeout=30)


def test_an_s3_trial_reads_as_the_folder_does(s3_trial):
    local_path, uri = s3_trial
    remote = create_trial(uri)
    local = create_trial(local_path)
    assert remote.name == local.name == "pt-mlp-basic"
    assert remote.tensor_names() == local.tensor_names()
    assert remote.steps(mode=modes.EVAL) == local.steps(mode=modes.EVAL)
    for name in ("MLP_fc1.weight", "CrossEntropyLoss_output_0"):
        for step in remote.tensor(name).steps()[:3]:
            ours = remote.tensor(name).value(step)
            assert np.array_equal(ours, local.tensor(name).value(step))
            # Bytes that came over the network are a copy the array owns.
            assert ours.flags.writeable and ours.base is None
