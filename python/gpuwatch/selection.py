"""select(): the least busy GPUs for the next job, as `gpuwatch select` chooses them."""
import json
import re
from dataclasses import dataclass
from typing import List, Optional, Sequence, Union

from ._errors import InvalidArgument, NotEnoughGpus
from ._native import DEMO_DIR, core

_UNITS = {"": 1, "b": 1, "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40,
          "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12}


@dataclass(frozen=True)
class Gpu:
    """A GPU (or MIG device) select() considered."""

    id: str  # "3", or "5:1" for MIG device 1 of GPU 5
    index: int
    mig_index: Optional[int]
    uuid: str
    free_bytes: float
    utilization: float
    memory_utilization: float
    reasons: List[str]  # empty when it qualifies

    @property
    def cuda_name(self) -> str:
        """What CUDA_VISIBLE_DEVICES takes: the index, or a MIG device's UUID."""
        return self.uuid if self.mig_index is not None else str(self.index)


def _bytes(value: Union[None, int, float, str], name: str) -> Optional[float]:
    if value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value)
    m = re.fullmatch(r"\s*([0-9.]+)\s*([a-zA-Z]*)\s*", str(value))
    if not m or m.group(2).lower() not in _UNITS:
        raise InvalidArgument(f"{name}={value!r}: expected bytes or a size like '40GiB'")
    return float(m.group(1)) * _UNITS[m.group(2).lower()]


def _ratio(percent: Optional[float], name: str) -> Optional[float]:
    if percent is None:
        return None
    if not 0 <= percent <= 100:
        raise InvalidArgument(f"{name}={percent!r}: expected a percentage from 0 to 100")
    return percent / 100.0


def select(count=1, *, min_free=None, max_util=None, max_memory_util=None,
           exclude: Sequence[int] = (), order="load", account_as_free: Sequence[str] = (),
           demo=False, scenario=None) -> List[Gpu]:
    """The ``count`` least busy GPUs that meet the limits; raises NotEnoughGpus otherwise.

    ``min_free`` in bytes or as '40GiB'; ``max_util`` and ``max_memory_util`` in percent.
    GPUs leased to other jobs (select --lease, run --gpus auto:N) count as taken.
    CUDA_VISIBLE_DEVICES is honoured. This does not lease: use `gpuwatch run --gpus auto:N`.
    """
    text = core.select(bool(demo or scenario), scenario or "", DEMO_DIR, int(count),
                       _bytes(min_free, "min_free"), _ratio(max_util, "max_util"),
                       _ratio(max_memory_util, "max_memory_util"), [int(i) for i in exclude],
                       order, list(account_as_free))
    doc = json.loads(text)
    chosen = [Gpu(**c) for c in doc["chosen"]]
    if len(chosen) < count:
        candidates = [Gpu(**c) for c in doc["candidates"]]
        lines = [f"GPU {c.id}: " + ("; ".join(c.reasons) or "qualifies") for c in candidates]
        raise NotEnoughGpus(f"{count} GPU(s) asked, {len(chosen)} qualify:\n  " +
                            "\n  ".join(lines), candidates)
    return chosen
