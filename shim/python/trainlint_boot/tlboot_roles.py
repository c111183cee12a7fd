"""Process labels: a process's role (main, rank, worker, helper) and rank, and the promotion of a
child process to a rank when it turns out to train."""
import os
import sys

from .tlboot_records import _emit, _gpu_status, _json_str
from .tlboot_shim import _set_gc_enabled, _start_shim
from .tlboot_state import _S
from .tlboot_wrappers import _W, _patch_attr


def _role():
    if _S.worker_flag:
        return "worker"
    if _S.promoted or _rank() is not None:
        return "rank"
    if _S.is_child:
        # not a DataLoader worker and not (yet) training: a forked checkpoint writer,
        # multiprocessing's resource tracker, a Python started by subprocess
        return "helper"
    return "main"


def _rank():
    if _S.dist_rank is not None:
        return _S.dist_rank
    if _S.rank_env_inherited:
        return None  # RANK came from the rank that started this process: not a rank by itself
    for k in ("RANK", "LOCAL_RANK"):
        v = os.environ.get(k)
        if v is not None and v.strip().lstrip("-").isdigit():
            return int(v)
    return None


# Ranks that no environment variable names: seen when they join a process group or step.


def _dist_rank():
    d = sys.modules.get("torch.distributed")
    try:
        if d is not None and d.is_available() and d.is_initialized():
            return int(d.get_rank())
    except Exception:
        pass
    return None


def _promote(why):
    """A child process that trains is a rank, not a helper. torchrun's ranks have RANK in their
    environment; torch.multiprocessing.spawn's and multiprocessing.Process's trainers do not, and
    are seen here when they join a process group or take their first optimizer step. From then on
    the process roots its own group in the report, its automatic GC pauses are recorded, and a
    spawned (not forked) one measures its own GPU activity."""
    try:
        if _S.worker_flag or _S.ended:
            return
        before = (_role(), _rank())
        if _S.dist_rank is None:
            _S.dist_rank = _dist_rank()
        if _S.is_child:
            _S.promoted = True
        role, rank = _role(), _rank()
        if (role, rank) == before:
            return
        _set_gc_enabled(True)
        if _S.proc_written:
            _emit('{"t":"role","role":%s,"rank":%s,"why":%s}\n'
                  % (_json_str(role), "null" if rank is None else "%d" % rank, _json_str(why)), urgent=True)
        if _S.is_child and not _S.shim_tried:
            if _S.origin == "fork":
                _S.shim_tried = True
                _gpu_status("unavailable", "a forked child of a process that runs the shim: CUPTI does not "
                            "follow fork(); start the trainers with spawn to measure their GPU")
            else:
                _start_shim()
    except Exception:
        pass


def _hook_distributed(mod):
    after = lambda: _promote("init_process_group")
    for owner in (mod, sys.modules.get("torch.distributed.distributed_c10d")):
        if owner is not None and callable(getattr(owner, "init_process_group", None)):
            _patch_attr(owner, "init_process_group", lambda orig: _W["make_after_call_wrapper"](orig, after),
                        "init_process_group")
