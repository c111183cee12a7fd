"""Exit paths and fork: atexit, SIGTERM (chained to the program's handler), os._exit, and the
state a forked child starts from (it writes its own records file)."""
import atexit
import os
import signal
import sys

from .tlboot_records import _end, _flush, _note
from .tlboot_shim import _set_gc_enabled
from .tlboot_state import _S
from .tlboot_wrappers import _W, _finish_wrapper


def _atexit():
    # An uncaught exception has been printed by now and left in sys.last_type; KeyboardInterrupt
    # is how SIGINT ends a Python program.
    exc = getattr(sys, "last_type", None)
    name = getattr(exc, "__name__", None) if isinstance(exc, type) else None
    _end("signal" if name == "KeyboardInterrupt" else "exit", name)


def _on_sigterm(signum, frame):
    prev = _S.prev_sigterm
    if callable(prev):
        # The program has its own handler: it decides whether this ends the run.
        _S.signal_seen = True
        try:
            _note("SIGTERM received")
            _flush()
        except Exception:
            pass
        return prev(signum, frame)
    _end("signal")
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def _before_exit():
    try:
        _end("exit" if _S.is_child else "os-exit")
    except Exception:
        pass


def _before_fork():
    try:
        _flush()
    except Exception:
        pass


def _after_fork_child():
    try:
        if _S.fd >= 0:
            try:
                os.close(_S.fd)  # the child's copy of the parent's descriptor
            except OSError:
                pass
        _S.fd = -1
        _S.buf = []
        _S.pid = os.getpid()
        _S.proc_written = False
        _S.is_child = True
        _S.origin = "fork"
        _set_gc_enabled(False)
        _S.immediate = True
        _S.worker_flag = False
        _S.worker_id = None
        _S.steps = 0
        _S.iter_opts = None
        _S.cycle = None
        _S.stop_pending = False
        _S.step_it = None
        _S.loop_iters = 0
        _S.opt_steps = 0
        _S.bsteps = 0
        _S.step_depth = 0
        _S.shim = None  # CUPTI does not follow fork(); the parent owns the shim
        _S.shim_tried = False
        _S.promoted = False
        _S.dist_rank = None  # the parent's process group is not this child's
        _S.gc_t0 = 0
        _S.explicit_gc = 0
        _S.signal_seen = False
        # A child of a process that already ended (after max-steps) records nothing either.
    except Exception:
        pass


def _install_exit_paths():
    atexit.register(_atexit)
    try:
        prev = signal.getsignal(signal.SIGTERM)
        if prev is not signal.SIG_IGN:
            _S.prev_sigterm = prev
            signal.signal(signal.SIGTERM, _on_sigterm)
    except Exception:
        pass  # not the main thread, or no signals here
    orig = os._exit
    if not getattr(orig, "__trainlint_wrapped__", False):
        os._exit = _finish_wrapper(_W["make_exit_wrapper"](orig, _before_exit), orig)
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(before=_before_fork, after_in_child=_after_fork_child)
