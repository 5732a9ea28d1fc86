"""gpuwatch.sweep: `gpuwatch sweep` from a notebook, its JSON document as a dict (docs/sweep.md).

A thin wrapper: it runs the gpuwatch binary (the one installed with the package, else the one on
PATH) with ``--json -`` and parses what it prints; the engine is the binary's.
"""
import json
import shlex
import subprocess
from typing import Iterable, Optional, Sequence, Union

from ._errors import Error, InvalidArgument


def _csv(name: str, items: Optional[Iterable[int]]):
    if items is None:
        return []
    # As given: gpuwatch refuses what is not a positive whole number, naming it.
    return [f"--{name}", ",".join(str(i) for i in items)]


def sweep(command: Union[str, Sequence[str]], values: Optional[Iterable[int]] = None, *,
          search: bool = False, bisect: bool = False, until_oom: bool = False,
          concurrency: Optional[Iterable[int]] = None,
          steps: Optional[int] = None, seconds: Optional[str] = None,
          margin: Optional[str] = None, gpus: Optional[str] = None,
          options: Sequence[str] = (), timeout: Optional[float] = None) -> dict:
    """Runs ``command`` (with ``{bs}`` where the value goes) per value; returns gpuwatch.sweep/1.

    ``command`` is a list of arguments, or one string split as a shell would (shlex).

    ``options`` are passed as they are (``["--scenario", "sweep.yaml"]``, ``["--max-trials", "8"]``).
    Raises InvalidArgument for what gpuwatch refuses (exit status 2), Error when the sweep stops
    early (a run failed for another reason than memory; the document is ``error.document``).
    """
    from .__main__ import _binary

    if isinstance(command, str):
        command = shlex.split(command)
    exe = _binary()
    if exe is None:
        raise Error("the gpuwatch binary is not installed with this package nor on PATH")
    argv = [exe, "sweep", "--json", "-", "-q", *options, *_csv("values", values),
            *_csv("concurrency", concurrency)]
    if search:
        argv.append("--search")
    if bisect:
        argv.append("--bisect")
    if until_oom:
        argv.append("--until-oom")
    for flag, value in (("--steps", steps), ("--seconds", seconds), ("--margin", margin),
                        ("--gpus", gpus)):
        if value is not None:
            argv += [flag, str(value)]
    done = subprocess.run(argv + ["--", *command], capture_output=True, text=True,
                          timeout=timeout, check=False)
    if done.returncode == 2:
        raise InvalidArgument(done.stderr.strip())
    try:
        document = json.loads(done.stdout)
    except ValueError:
        raise Error(done.stderr.strip() or f"gpuwatch sweep exited {done.returncode}") from None
    if done.returncode != 0:
        error = Error(document.get("stopped") or done.stderr.strip())
        error.document = document
        raise error
    return document
