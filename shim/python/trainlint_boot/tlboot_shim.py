"""The shim (GPU side): libtrainlint_shim.so through ctypes, started once per process that may
run CUDA, and handed over to torch.profiler when the program starts one with CUDA activities."""
import os
import sys

from .tlboot_records import _flush, _gpu_status, _open_records, _split_status, _write_proc
from .tlboot_state import _S, _mono
from .tlboot_wrappers import _W, _patch_attr


def _find_env_cupti():
    """libcupti from the program's Python environment (pip's nvidia-cuda-cupti), if any: the copy
    torch itself will load, so the process never holds two different ones."""
    for entry in sys.path:
        base = os.path.join(entry or ".", "nvidia")
        if not os.path.isdir(base):
            continue
        try:
            subs = sorted(os.listdir(base))
        except OSError:
            continue
        for sub in subs:
            lib = os.path.join(base, sub, "lib")
            try:
                names = sorted(n for n in os.listdir(lib) if n.startswith("libcupti.so"))
            except OSError:
                continue
            if names:
                return os.path.join(lib, names[-1])
    return None


_lib = [None, None]  # (the shim library, the error that kept it from loading), once per process


def _shim_lib():
    """libtrainlint_shim through ctypes, or None (host-only: TRAINLINT_SHIM unset or unloadable).
    Loading it starts nothing; tl_shim_start does."""
    if _lib[0] is not None or _lib[1] is not None:
        return _lib[0]
    path = os.environ.get("TRAINLINT_SHIM")
    if not path:
        _lib[1] = "TRAINLINT_SHIM is not set: host measurements only"
        return None
    try:
        import ctypes

        lib = ctypes.CDLL(path)
        lib.tl_shim_start.argtypes = [ctypes.c_char_p]
        lib.tl_shim_start.restype = ctypes.c_int
        lib.tl_shim_status.argtypes = []
        lib.tl_shim_status.restype = ctypes.c_char_p
        lib.tl_shim_flush.argtypes = []
        lib.tl_shim_flush.restype = ctypes.c_int
        lib.tl_shim_stop.argtypes = []
        lib.tl_shim_stop.restype = None
        lib.tl_shim_release_cupti.argtypes = []
        lib.tl_shim_release_cupti.restype = None
        lib.tl_shim_now_ns.argtypes = []
        lib.tl_shim_now_ns.restype = ctypes.c_longlong
        lib.tl_shim_gc_record.argtypes = [ctypes.c_int]
        lib.tl_shim_gc_record.restype = None
        # called with the GIL held, from gc and from the gc.collect wrapper: PyDLL keeps the GIL
        py = ctypes.PyDLL(path)
        lib.gc_event = py.tl_shim_gc_event
        lib.gc_event.argtypes = [ctypes.py_object, ctypes.py_object]
        lib.gc_event.restype = None
        lib.gc_explicit = py.tl_shim_gc_explicit
        lib.gc_explicit.argtypes = [ctypes.c_int]
        lib.gc_explicit.restype = None
    except Exception as e:
        _lib[1] = "cannot load the shim %s: %s" % (path, e)
        return None
    _lib[0] = lib
    return lib


def _set_gc_enabled(on):
    _S.gc_enabled = on
    lib = _lib[0]
    if lib is not None:
        try:
            lib.tl_shim_gc_record(1 if on else 0)
        except Exception:
            pass


def _start_shim():
    _S.shim_tried = True
    lib = _shim_lib()
    if lib is None:
        _gpu_status("unavailable", _lib[1])
        return
    hint = None
    if not os.environ.get("TRAINLINT_CUPTI"):
        hint = _find_env_cupti()
        if hint:
            os.environ["TRAINLINT_CUPTI"] = hint
    try:
        if not _open_records():
            return
        _write_proc()
        _flush()  # our lines first: the shim appends to the same file
        rc = lib.tl_shim_start(os.fsencode(_S.path))
        status = (lib.tl_shim_status() or b"").decode("utf-8", "replace")
    except Exception as e:
        _gpu_status("unavailable", "tl_shim_start failed: %s" % e)
        return
    finally:
        if hint:
            os.environ.pop("TRAINLINT_CUPTI", None)
    state, reason = _split_status(status, rc)
    _gpu_status(state, reason)
    _S.shim_status = status
    _S.shim = lib
    _S.shim_last_flush = _mono()
    _set_gc_enabled(_S.gc_enabled)


def _release_shim_for_profiler(args):
    """torch.profiler (Kineto) is about to take CUPTI for its CUDA activities. One process has one
    CUPTI, and its activity callbacks are process-wide: Kineto registering its own would hand our
    outstanding buffers to its deallocator and its buffers to ours. So the shim flushes, disables
    its activities and steps aside first, and the records say that the GPU was not measured."""
    try:
        if _S.shim is None or _S.cupti_released or _S.pid != os.getpid():
            return
        acts = getattr(args[0], "kineto_activities", None) if args else None
        if acts is not None and not any(str(getattr(a, "name", a)).upper().endswith("CUDA") for a in acts):
            return  # a CPU-only trace: Kineto leaves CUPTI alone
        _flush()
        _S.shim.tl_shim_release_cupti()  # the records (GC pauses included) go on
        _S.cupti_released = True
        _gpu_status("busy", "the program started torch.profiler with CUDA activities after %d optimizer steps; "
                    "the shim handed CUPTI over to it (one CUPTI client per process), so GPU time is not "
                    "measured in this run" % _S.steps)
    except Exception:
        pass


def _hook_torch_profiler(mod):
    prof = getattr(mod, "profile", None)
    if isinstance(prof, type) and "_prepare_trace" in prof.__dict__:
        _patch_attr(prof, "_prepare_trace", lambda orig: _W["make_before_wrapper"](orig, _release_shim_for_profiler),
                    "torch.autograd.profiler.profile._prepare_trace")
