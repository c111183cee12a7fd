"""trainlint_boot: the bootstrap that `trainlint run` injects into the program's interpreter.

It implements the Python side of docs/runtime-protocol.md (protocol version 1): it reads the probe
plan (TRAINLINT_PLAN), writes the records of this process to TRAINLINT_RECORDS/rec-<pid>.jsonl,
loads libtrainlint_shim.so (TRAINLINT_SHIM) with ctypes for the GPU side, and installs the probes:

- site timers: the callables named by the plan's `callee` are wrapped; a call counts only when the
  caller's file and line are a plan site for that callee (sys._getframe(1)), so library-internal
  calls of the same function cost one frame lookup and are not recorded;
- steps: optimizer steps (Optimizer subclasses' `step`, GradScaler.step; nested calls count once),
  with TRAINLINT_MAX_STEPS ending the program cleanly (SystemExit(0)) after N steps;
- data: DataLoader iterator `__next__` (wait, main process only) and `iter(DataLoader)` (iter);
- GC: automatic collections through gc.callbacks (explicit gc.collect() calls are not recorded as
  automatic pauses);
- exit: atexit, SIGTERM (chained), os._exit, and forked children (DataLoader workers) that write
  their own file.

Everything is lazy: modules such as torch or PIL are patched right after they are first imported,
through a sys.meta_path finder that only watches the modules it needs.

Transparency rules: nothing is ever printed (problems become `note`/`gpu_status` records), no
exception of the program is swallowed or changed, and the bootstrap's own failures never reach
the program. The wrappers are compiled under a file name that the warnings machinery treats as
import-system internal, so a library warning issued with stacklevel=2 from a wrapped function is
still attributed to the program's line, not to the wrapper.

Only the standard library is imported at start-up (ctypes only when TRAINLINT_SHIM is set).
Python 3.8+.

The package is wired here; each concern is a module of its own:

    tlboot_state     the state of this process (_S) and the records' clock
    tlboot_records   the records writer (rec-<pid>.jsonl: proc ... end)
    tlboot_wrappers  the wrappers' code and how a callable is replaced (_patch_attr)
    tlboot_imports   post-import hooks (a sys.meta_path finder)
    tlboot_plan      the probe plan: callee -> file -> line -> site ids; tagged objects
    tlboot_units     statement units (a call timed to the end of its statement)
    tlboot_sites     site timers: which callable each plan callee names, and when to wrap it
    tlboot_steps     step marking and --max-steps
    tlboot_data      DataLoader hooks (waits, worker start-up and shutdown, workers' records)
    tlboot_gc        automatic GC pauses and explicit gc.collect() calls
    tlboot_roles     process labels: role, rank, a child promoted to a rank
    tlboot_shim      the shim (GPU side) and torch.profiler's claim on CUPTI
    tlboot_exits     exit paths and fork

The modules' names carry a prefix because the package folder itself may be the PYTHONPATH entry
(the source tree, an install): a plain `records.py` there would shadow a library of that name.
"""
import os
import sys

from .tlboot_data import _hook_data_parallel, _hook_dataloader, _hook_worker
from .tlboot_exits import _install_exit_paths
from .tlboot_gc import _install_gc
from .tlboot_imports import _PostImportFinder, _when_imported
from .tlboot_plan import _load_plan, _plan_sites
from .tlboot_records import _flush, _note, _write_proc
from .tlboot_roles import _hook_distributed, _rank
from .tlboot_shim import _hook_torch_profiler, _start_shim
from .tlboot_sites import _install_site
from .tlboot_state import _S, _mono
from .tlboot_steps import _hook_autograd, _hook_grad_scaler, _hook_optimizer

__all__ = ["install"]


_ANCESTOR_VAR = "TRAINLINT_RECORDED_ANCESTOR"  # set by every recorded process, for its descendants
_ANCESTOR_RANK_VAR = "TRAINLINT_RECORDED_RANK"  # the RANK a recorded process saw, for its descendants


def install():
    """Installs the probes in this interpreter. Does nothing without TRAINLINT_RECORDS; never
    raises and never prints."""
    if _S.installed:
        return
    _S.installed = True
    records = os.environ.get("TRAINLINT_RECORDS")
    if not records:
        return
    try:
        _S.records_dir = records
        _S.pid = os.getpid()
        _S.cwd = os.getcwd()
        _S.last_flush = _mono()
        argv = getattr(sys, "argv", None) or []
        if "--multiprocessing-fork" in argv:
            _S.origin = "spawn"  # a multiprocessing spawn/forkserver child (e.g. a DataLoader worker)
        elif os.environ.get(_ANCESTOR_VAR) or os.path.exists(os.path.join(records, "rec-%d.jsonl" % os.getppid())):
            # Started, at any depth, by a recorded process (torchrun's ranks, multiprocessing's
            # resource tracker): the variable survives a parent that exits first or a shell between.
            _S.origin = "subprocess"
        os.environ[_ANCESTOR_VAR] = str(_S.pid)
        env_rank = os.environ.get("RANK", os.environ.get("LOCAL_RANK"))
        if _S.origin != "root" and env_rank is not None and os.environ.get(_ANCESTOR_RANK_VAR) == env_rank:
            _S.rank_env_inherited = True  # e.g. a `python tool.py` that a rank runs through subprocess
        if env_rank is not None:
            os.environ[_ANCESTOR_RANK_VAR] = env_rank
        if _S.origin != "root":
            _S.is_child = True
            _S.immediate = True
            _S.gc_enabled = _rank() is not None  # told to the shim once it starts
        if not _S.is_child:
            _write_proc()
            _flush()
        max_steps = 0
        plan = os.environ.get("TRAINLINT_PLAN")
        if plan:
            try:
                max_steps = _load_plan(plan)
            except Exception as e:
                _note("cannot read the plan %s: %s: %s" % (plan, type(e).__name__, e))
        else:
            _note("TRAINLINT_PLAN is not set: no site probes")
        env_max = os.environ.get("TRAINLINT_MAX_STEPS")
        if env_max:
            try:
                max_steps = int(env_max)
            except ValueError:
                _note("TRAINLINT_MAX_STEPS=%r is not an integer: ignored" % env_max)
        _S.max_steps = max_steps

        sys.meta_path.insert(0, _PostImportFinder())
        _install_exit_paths()
        _install_gc()
        for callee in sorted(_plan_sites):
            _install_site(callee)
        _when_imported("torch.optim.optimizer", _hook_optimizer)
        _when_imported("torch.cuda.amp.grad_scaler", _hook_grad_scaler)
        _when_imported("torch.amp.grad_scaler", _hook_grad_scaler)
        _when_imported("torch.utils.data.dataloader", _hook_dataloader)
        _when_imported("torch.utils.data._utils.worker", _hook_worker)
        _when_imported("torch.distributed", _hook_distributed)
        _when_imported("torch.autograd", _hook_autograd)
        _when_imported("torch.autograd.profiler", _hook_torch_profiler)
        if _S.want_data_parallel:
            _when_imported("torch.nn.parallel.data_parallel", _hook_data_parallel)
        if not _S.is_child or _rank() is not None:
            _start_shim()  # DataLoader workers (and other multiprocessing children) run no CUDA
        _flush()
    except Exception as e:
        _note("bootstrap install failed part-way: %s: %s" % (type(e).__name__, e))
