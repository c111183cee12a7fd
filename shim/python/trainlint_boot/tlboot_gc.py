"""GC: automatic collections through gc.callbacks (timed in C by the shim when it is loaded),
and gc.collect() wrapped so that explicit collections are told apart (and timed at plan sites)."""
import gc
import os
import signal
import sys

from .tlboot_plan import _file_resolver, _plan_sites
from .tlboot_records import _emit, _emit_site
from .tlboot_shim import _shim_lib
from .tlboot_state import _S, _getframe, _mono
from .tlboot_wrappers import _W, _finish_wrapper


def _gc_callback(phase, info):
    if phase == "start":
        _S.gc_t0 = _mono()
        return
    t0 = _S.gc_t0
    _S.gc_t0 = 0
    if _S.explicit_gc or not _S.gc_enabled or not t0:
        return
    try:
        _emit('{"t":"gc","start":%d,"end":%d,"gen":%d}\n' % (t0, _mono(), int(info.get("generation", -1))))
    except Exception:
        pass


def _install_gc():
    files = resolve_file = None
    if "gc.collect" in _plan_sites:
        files, resolve_file = _file_resolver("gc.collect")
    lib = _shim_lib()
    if lib is not None:
        # Timed in C: no Python bytecode runs inside the callback (see tl_shim_gc_event). The
        # wrapper below tells it which collections are explicit gc.collect() calls.
        _S.gc_explicit_fn = lib.gc_explicit
        gc.callbacks.append(lib.gc_event)
    else:
        gc.callbacks.append(_gc_callback)
        _install_unraisable_rescue()
    orig = gc.collect
    if not getattr(orig, "__trainlint_wrapped__", False):
        w = _W["make_gc_collect_wrapper"](orig, _S, files, resolve_file, _emit_site, _mono, _getframe)
        gc.collect = _finish_wrapper(w, orig)


def _install_unraisable_rescue():
    """Host-only mode times GC pauses with a Python gc callback. A ^C whose KeyboardInterrupt is
    raised inside it would be swallowed by gc (an unraisable exception): send SIGINT again from a
    moment later, so that the program gets it where it would have without us."""
    prev = getattr(sys, "unraisablehook", None)
    if prev is None:
        return

    def hook(u):
        try:
            if u.exc_type is KeyboardInterrupt and getattr(u, "object", None) is _gc_callback:
                if _S.explicit_gc:
                    _S.pending_kbi = True  # raised by the gc.collect() wrapper as the call returns
                    return
                # an automatic collection: signal again a moment later (best effort: it may land
                # in another collection's callback, and be sent again)
                import threading

                pid = os.getpid()
                t = threading.Timer(0.001, lambda: os.kill(pid, signal.SIGINT))
                t.daemon = True
                t.start()
                return
        except Exception:
            pass
        prev(u)

    sys.unraisablehook = hook
