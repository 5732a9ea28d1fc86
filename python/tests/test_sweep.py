"""gpuwatch.sweep(): `gpuwatch sweep` from Python, against the fake NVML's sweep scenario (each run
of gpuwatch-demo-trainer holds 2 GiB + 48 MiB per sample of an H200's 140.40 GiB)."""
import os

import pytest

import gpuwatch
from gpuwatch import Error, InvalidArgument

from conftest import ROOT

SCENARIO = ["--scenario", os.path.join(ROOT, "scenarios", "sweep.yaml")]
MIB = 1024.0 ** 2
GIB = 1024 * MIB


@pytest.fixture(scope="module")
def trainer():
    """The shipped test job, from the CMake build the package was installed from."""
    build = os.environ.get("GPUWATCH_CMAKE_BUILD_DIR", os.path.join(ROOT, "build", "gcc"))
    path = os.path.join(build if os.path.isabs(build) else os.path.join(ROOT, build),
                        "gpuwatch-demo-trainer")
    assert os.access(path, os.X_OK), f"no {path}: build gpuwatch first (cmake --preset gcc)"
    return path


def test_values_give_the_fit_and_search_the_boundary(trainer):
    doc = gpuwatch.sweep([trainer, "--batch", "{bs}"], values=[8, 16, 32], search=True, steps=3,
                         options=SCENARIO)
    assert doc["schema"] == "gpuwatch.sweep/1" and doc["mode"] == "search"
    assert [r["value"] for r in doc["runs"][:3]] == [8, 16, 32]
    assert doc["fit"]["model"] == "linear"
    assert doc["fit"]["b_bytes_per_value"] == pytest.approx(48 * MIB, rel=0.01)
    boundary = int((doc["free_memory_bytes"] - 2 * GIB) // (48 * MIB))
    b = doc["boundary"]
    assert b["found"] and b["largest_fit"] <= boundary < b["smallest_oom"]
    assert b["trials"] < b["doubling_bisection_trials"]


def test_bisect_makes_the_runs_search_counted_for_it(trainer):
    doc = gpuwatch.sweep([trainer, "--batch", "{bs}"], bisect=True, steps=3, options=SCENARIO)
    assert doc["mode"] == "bisect"
    values = [r["value"] for r in doc["runs"]]
    assert values[:9] == [8 << i for i in range(9)]  # doubling from 8 up to the first failure
    assert doc["boundary"]["found"]
    assert any("by doubling + bisection" in line for line in doc["verdict"])


def test_what_gpuwatch_refuses_raises_invalid_argument_naming_it(trainer):
    with pytest.raises(InvalidArgument, match="no {bs}"):
        gpuwatch.sweep([trainer, "--batch", "8"], values=[8, 16], options=SCENARIO)
    with pytest.raises(InvalidArgument, match="choose one of"):
        gpuwatch.sweep([trainer, "--batch", "{bs}"], search=True, bisect=True, options=SCENARIO)
    with pytest.raises(InvalidArgument, match=r'item 2 \("8.5"\) is not a whole number'):
        gpuwatch.sweep([trainer, "--batch", "{bs}"], values=[8, 8.5], options=SCENARIO)


def test_a_command_given_as_one_string_is_split_as_a_shell_would(trainer):
    doc = gpuwatch.sweep(f"{trainer} --batch '{{bs}}'", values=[8, 16], steps=3, options=SCENARIO)
    assert doc["command"] == [trainer, "--batch", "{bs}"]
    assert [r["result"] for r in doc["runs"]] == ["fits", "fits"]


def test_a_job_failing_for_another_reason_raises_with_the_document(tmp_path):
    job = tmp_path / "job.sh"
    job.write_text("#!/bin/sh\necho 'no such file: data.csv' >&2\nexit 3\n")
    job.chmod(0o755)
    with pytest.raises(Error, match="failed for another reason than memory") as caught:
        gpuwatch.sweep([str(job), "{bs}"], values=[8, 16], options=SCENARIO)
    runs = caught.value.document["runs"]
    assert len(runs) == 1 and runs[0]["result"] == "failed"
