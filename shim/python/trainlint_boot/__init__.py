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
"""
import atexit
import gc
import os
import signal
import sys
import time

__all__ = ["install"]

_mono = time.monotonic_ns  # CLOCK_MONOTONIC on Linux: the records' clock
_getframe = sys._getframe

# ------------------------------------------------------------------------------------------------
# state


class _State(object):
    installed = False
    records_dir = None
    path = None  # this process's records file
    fd = -1
    buf = []
    last_flush = 0
    pid = 0
    ppid = 0
    proc_written = False
    immediate = False  # flush after every record (child processes)
    ended = False
    is_child = False  # not the program's root process (see origin)
    origin = "root"  # root / fork / spawn (multiprocessing) / subprocess (a recorded parent)
    gc_enabled = True  # automatic GC pauses are recorded in main and rank processes only
    worker_flag = False  # inside torch's DataLoader _worker_loop
    worker_id = None
    steps = 0
    step_depth = 0
    max_steps = 0
    signal_seen = False
    explicit_gc = 0
    gc_t0 = 0
    shim = None  # ctypes library, only in the process that started it
    shim_last_flush = 0
    shim_status = None  # the status line written at start
    cwd = None
    prev_sigterm = None
    want_data_parallel = False
    shim_tried = False  # _start_shim ran (or was ruled out) in this process
    backward_steps = False  # the plan's step marker is backward() (no optimizer step in the program)
    opt_steps = 0  # optimizer steps seen in this process
    bsteps = 0  # backward() calls recorded as `bstep` while no optimizer step had run
    gc_explicit_fn = None  # the shim's tl_shim_gc_explicit, when GC pauses are timed in C
    cupti_released = False  # the shim gave CUPTI up to torch.profiler
    pending_kbi = False  # host-only: a KeyboardInterrupt our gc callback swallowed in gc.collect()
    promoted = False  # a child process found to train (init_process_group, or an optimizer step)
    dist_rank = None  # torch.distributed.get_rank() once the process group is up
    rank_env_inherited = False  # RANK is the recorded parent rank's own (a subprocess it started)
    # Steps are iterations: several optimizers stepping in one iteration (a GAN) make one step.
    iter_opts = None  # ids of the optimizers that stepped in the current iteration
    cycle = None  # the optimizers of one whole iteration, known once the first one steps again
    stop_pending = False  # --max-steps reached mid-iteration: stop when the iteration is complete
    step_loop = None  # (realpath, line) of the training loop's `for`, from the plan
    step_it = None  # weak reference to the DataLoader iterator that the training loop iterates
    loop_iters = 0  # its __next__ calls
    loop_steps = False  # steps are the training loop's iterations (no optimizer step or backward)


_S = _State()


# ------------------------------------------------------------------------------------------------
# records


def _json_str(s):
    """A JSON string literal (ASCII-only, so the line is valid UTF-8 whatever the path holds)."""
    import json

    return json.dumps(s)


def _open_records():
    if _S.fd >= 0 or not _S.records_dir:
        return _S.fd >= 0
    try:
        _S.path = os.path.join(_S.records_dir, "rec-%d.jsonl" % _S.pid)
        _S.fd = os.open(_S.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
    except OSError:
        _S.fd = -1
        _S.records_dir = None  # cannot record: stay silent
        return False
    return True


def _flush():
    lines = _S.buf
    if not lines:
        return
    _S.buf = []  # swap first: a record added meanwhile (another thread, a GC callback) is kept
    fd = _S.fd
    if fd < 0:
        return
    data = "".join(lines).encode("utf-8", "surrogateescape")
    try:
        while data:
            n = os.write(fd, data)
            data = data[n:]
    except OSError:
        _S.fd = -1
        _S.records_dir = None
    _S.last_flush = _mono()


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


def _write_proc():
    if _S.proc_written:
        return
    if not _open_records():
        return
    _S.proc_written = True
    if _S.is_child and not _S.worker_flag:
        # A forked child that has not told us yet: ask torch whether this is a DataLoader worker.
        tud = sys.modules.get("torch.utils.data")
        try:
            info = tud.get_worker_info() if tud is not None else None
            if info is not None:
                _S.worker_flag = True
                _S.worker_id = info.id
        except Exception:
            pass
    import json

    argv = getattr(sys, "argv", None) or [""]
    rec = {
        "t": "proc",
        "pid": _S.pid,
        "ppid": os.getppid(),
        "role": _role(),
        "rank": _rank(),
        "argv0": argv[0],
        "python": "%d.%d.%d" % sys.version_info[:3],
        "executable": sys.executable,
        "origin": _S.origin,
    }
    try:
        rec["cpus"] = len(os.sched_getaffinity(0))  # the cores this process may run on
    except Exception:
        pass
    if _S.worker_id is not None:
        rec["worker_id"] = _S.worker_id
    _S.buf.insert(0, json.dumps(rec, separators=(",", ":")) + "\n")


def _emit(line, urgent=False):
    if _S.ended or _S.records_dir is None:
        return
    if not _S.proc_written:
        _write_proc()
    _S.buf.append(line)
    if urgent or _S.immediate or len(_S.buf) >= 256:
        _flush()
    elif _mono() - _S.last_flush >= 200000000:
        _flush()


def _emit_site(ids, t0, t1):
    try:
        for i in ids:
            _emit('{"t":"site","id":%d,"start":%d,"end":%d}\n' % (i, t0, t1))
    except Exception:
        pass


def _emit_loader(kind, t0, t1, ids):
    """A DataLoader `wait` (next batch) or `iter` (worker start-up) record, tagged with the
    plan id of the DataLoader's site when the loader was built at one."""
    try:
        if ids:
            _emit('{"t":"%s","start":%d,"end":%d,"id":%d}\n' % (kind, t0, t1, ids[0]))
        else:
            _emit('{"t":"%s","start":%d,"end":%d}\n' % (kind, t0, t1))
    except Exception:
        pass


def _emit_istop(ids, t0, t1):
    """An `istop` record: a tagged iterator shutting its workers down."""
    try:
        if ids and not _S.worker_flag:
            _emit('{"t":"istop","start":%d,"end":%d,"id":%d}\n' % (t0, t1, ids[0]))
    except Exception:
        pass


def _emit_wait(t0, t1, ids):
    _emit_loader("wait", t0, t1, ids)


def _emit_iter(t0, t1, ids, loader=None):
    """`iter` also says how many workers the loader starts (`workers`), so that the report names
    the right cause of a data wait."""
    try:
        nw = int(getattr(loader, "num_workers", -1))
        if ids:
            _emit('{"t":"iter","start":%d,"end":%d,"id":%d,"workers":%d}\n' % (t0, t1, ids[0], nw))
        else:
            _emit('{"t":"iter","start":%d,"end":%d,"workers":%d}\n' % (t0, t1, nw))
    except Exception:
        pass


def _note(text):
    try:
        _emit('{"t":"note","source":"bootstrap","text":%s}\n' % _json_str(str(text)), urgent=True)
    except Exception:
        pass


def _gpu_status(state, reason):
    try:
        _emit('{"t":"gpu_status","state":%s,"reason":%s}\n' % (_json_str(state), _json_str(reason)), urgent=True)
    except Exception:
        pass


def _torch_missing():
    """True when this interpreter cannot import torch (the report says so once)."""
    if "torch" in sys.modules:
        return False
    try:
        import importlib.util

        return importlib.util.find_spec("torch") is None
    except Exception:
        return False


def _end(reason, exception=None):
    """Writes the `end` line once, after the shim's last GPU records; then records stop."""
    if _S.ended:
        return
    try:
        if _S.shim is not None and _S.pid == os.getpid():
            try:
                _flush()  # host records first, then the shim's last GPU records
                _S.shim.tl_shim_stop()
                status = (_S.shim.tl_shim_status() or b"").decode("utf-8", "replace")
                if status != _S.shim_status and not _S.cupti_released:
                    # e.g. no-gpu at start, yet activity records came: the last gpu_status wins
                    state, why = _split_status(status, 0)
                    _gpu_status(state, why)
            except Exception:
                pass
            _S.shim = None
        if reason == "exit" and _S.signal_seen:
            reason = "signal"
        if _S.records_dir is not None:
            extra = ',"exception":%s' % _json_str(exception) if exception else ""
            if not _S.worker_flag and _torch_missing():
                extra += ',"torch":false'
            try:
                t = os.times()
                extra += ',"cpu_ms":%d' % int(1000 * (t.user + t.system))  # the cores this process kept busy
            except Exception:
                pass
            _emit('{"t":"end","reason":"%s","steps":%d%s}\n' % (reason, _S.steps, extra), urgent=True)
    except Exception:
        pass
    _S.ended = True


# ------------------------------------------------------------------------------------------------
# the wrappers, compiled under a file name the warnings module skips when it counts `stacklevel`
# (CPython: frames whose file name contains both "importlib" and "_bootstrap" are import-internal).

_WRAPPER_FILE = "<trainlint_boot wrappers: importlib._bootstrap-transparent>"

_WRAPPER_SRC = r'''
# Every wrapper drops its own entry from the traceback of an exception that passes through it
# (CPython 3.11+ re-raises with exc.__traceback__; older versions keep one extra frame line).

def trim(e, code):
    # drops the wrapper's own frame (code) from the head of e's traceback
    tb = e.__traceback__
    if tb is not None and tb.tb_frame.f_code is code:
        e.__traceback__ = tb.tb_next


def make_site_wrapper(orig, files, resolve_file, emit_site, mono, getframe, tag, begin_unit):
    # files: {co_filename: {line: (timed ids, tag ids, unit)} or None}. Timed ids get a `site`
    # record; tag ids mark the object built there (args[0] of an __init__: a DataLoader, a
    # DataParallel). A unit (first, last line) times the caller's statement from this call to its
    # end (begin_unit traces that one frame until it leaves the lines).
    def wrapper(*args, **kwargs):
        try:
            f = getframe(1)
            fn = f.f_code.co_filename
            try:
                lines = files[fn]
            except KeyError:
                lines = resolve_file(fn)
            if lines is not None:
                entry = lines.get(f.f_lineno)
                if entry is not None:
                    ids, tags, unit = entry
                    if unit is None or not ids:
                        f = None
                    t0 = mono()
                    try:
                        result = orig(*args, **kwargs)
                    except BaseException:
                        if ids:
                            emit_site(ids, t0, mono())
                        f = None
                        raise
                    if f is not None:
                        begin_unit(f, ids, t0, unit)
                        f = None
                    elif ids:
                        emit_site(ids, t0, mono())
                    if tags and args:
                        tag(args[0], tags)
                    return result
            f = None
            return orig(*args, **kwargs)
        except BaseException as e:
            trim(e, CODE[0])
            raise
    CODE[0] = wrapper.__code__
    return wrapper


def make_gc_collect_wrapper(orig, S, files, resolve_file, emit_site, mono, getframe):
    def collect(*args, **kwargs):
        try:
            ids = None
            if files is not None:
                f = getframe(1)
                fn = f.f_code.co_filename
                try:
                    lines = files[fn]
                except KeyError:
                    lines = resolve_file(fn)
                if lines is not None:
                    entry = lines.get(f.f_lineno)
                    if entry is not None:
                        ids = entry[0]
                f = None
            S.explicit_gc += 1
            native = S.gc_explicit_fn
            if native is not None:
                native(1)
            t0 = mono()
            try:
                return orig(*args, **kwargs)
            finally:
                t1 = mono()
                S.explicit_gc -= 1
                if native is not None:
                    native(-1)
                if ids:
                    emit_site(ids, t0, t1)
                if S.pending_kbi and not S.explicit_gc:
                    # a ^C that a Python gc callback swallowed during this collection (host-only)
                    S.pending_kbi = False
                    raise KeyboardInterrupt
        except BaseException as e:
            trim(e, CODE[1])
            raise
    CODE[1] = collect.__code__
    return collect


def make_step_wrapper(orig, S, on_step):
    def step(*args, **kwargs):
        try:
            if S.step_depth:
                return orig(*args, **kwargs)
            S.step_depth = 1
            try:
                result = orig(*args, **kwargs)
            finally:
                S.step_depth = 0
        except BaseException as e:
            trim(e, CODE[2])
            raise
        on_step(args[0] if args else None)  # may raise SystemExit(0) at TRAINLINT_MAX_STEPS
        return result
    CODE[2] = step.__code__
    return step


def make_next_wrapper(orig, S, emit_wait, mono, tags_get, on_loop_next):
    def __next__(self):
        try:
            if S.worker_flag:
                return orig(self)
            t0 = mono()
            if S.step_it is not None and S.step_it() is self:
                on_loop_next(t0)  # an iteration of the training loop begins (may end the program)
            try:
                return orig(self)
            finally:
                emit_wait(t0, mono(), tags_get(self))
        except BaseException as e:
            trim(e, CODE[3])
            raise
    CODE[3] = __next__.__code__
    return __next__


def make_iter_wrapper(orig, emit_iter, mono, tags_get, tag, loop_iter):
    def __iter__(self):
        try:
            ids = tags_get(self)
            t0 = mono()
            try:
                it = orig(self)
            finally:
                emit_iter(t0, mono(), ids, self)
            if ids:
                tag(it, ids)  # the iterator's waits belong to this loader
            loop_iter(it)
            return it
        except BaseException as e:
            trim(e, CODE[4])
            raise
    CODE[4] = __iter__.__code__
    return __iter__


def make_after_init_wrapper(orig, after):
    def __init__(self, *args, **kwargs):
        try:
            orig(self, *args, **kwargs)
        except BaseException as e:
            trim(e, CODE[5])
            raise
        after(self)
    CODE[5] = __init__.__code__
    return __init__


def make_after_call_wrapper(orig, after):
    def call(*args, **kwargs):
        try:
            result = orig(*args, **kwargs)
        except BaseException as e:
            trim(e, CODE[7])
            raise
        after()
        return result
    CODE[7] = call.__code__
    return call


def make_tagged_method_wrapper(orig, tags_get, emit_site, mono):
    # Times a method of an object built at a tagged plan site (DataParallel.replicate & co).
    def method(self, *args, **kwargs):
        try:
            ids = tags_get(self)
            if not ids:
                return orig(self, *args, **kwargs)
            t0 = mono()
            try:
                return orig(self, *args, **kwargs)
            finally:
                emit_site(ids, t0, mono())
        except BaseException as e:
            trim(e, CODE[6])
            raise
    CODE[6] = method.__code__
    return method


def make_worker_loop_wrapper(orig, started, finished):
    def _worker_loop(*args, **kwargs):
        started(args, kwargs)
        try:
            return orig(*args, **kwargs)
        finally:
            finished()
    return _worker_loop


def make_before_wrapper(orig, before):
    # Runs before(args) first (it never raises), then the original.
    def call(*args, **kwargs):
        before(args)
        try:
            return orig(*args, **kwargs)
        except BaseException as e:
            trim(e, CODE[8])
            raise
    CODE[8] = call.__code__
    return call


def make_build_class_wrapper(orig, after):
    # builtins.__build_class__: after(cls) sees every class as the `class` statement creates it.
    def __build_class__(func, name, *bases, **kwargs):
        try:
            cls = orig(func, name, *bases, **kwargs)
        except BaseException as e:
            trim(e, CODE[9])
            raise
        after(cls)
        return cls
    CODE[9] = __build_class__.__code__
    return __build_class__


def make_exit_wrapper(orig, before):
    def _exit(*args, **kwargs):
        before()
        return orig(*args, **kwargs)
    return _exit
'''

_W = {"CODE": [None] * 10}
exec(compile(_WRAPPER_SRC, _WRAPPER_FILE, "exec"), _W)


def _finish_wrapper(wrapper, orig):
    """functools.update_wrapper without importing functools' callers' expectations away."""
    for a in ("__module__", "__name__", "__qualname__", "__doc__"):
        try:
            setattr(wrapper, a, getattr(orig, a))
        except Exception:
            pass
    try:
        wrapper.__dict__.update(getattr(orig, "__dict__", {}))
    except Exception:
        pass
    wrapper.__wrapped__ = orig
    wrapper.__trainlint_wrapped__ = True
    return wrapper


# ------------------------------------------------------------------------------------------------
# the plan: callee -> {real path: {line: (site ids)}}

_plan_sites = {}  # callee -> {realpath: {line: (timed ids, tag ids)}}
_file_tables = {}  # callee -> {co_filename: {line: entry} or None} (the wrappers' cache)

# Which probes time the flagged call itself, and which only mark the object it builds so that
# later records can name it (wait/iter of a DataLoader, DataParallel's replicate/scatter/...).
_TIMED_PROBES = ("site", "site+memcpy")
_TAG_PROBES = ("data-wait", "data-wait+memcpy", "worker-start", "data-parallel")
_MODULE_CALL = "torch.nn.modules.module.Module.__call__"


def _realpath(fn):
    if not fn or fn.startswith("<"):
        return None
    try:
        if not os.path.isabs(fn):
            fn = os.path.join(_S.cwd or os.getcwd(), fn)
        return os.path.realpath(fn)
    except Exception:
        return None


def _call_spans(path, wanted):
    """{(line, col): end_line} for the plan sites of `path`, from the file's own syntax tree.

    `wanted` holds 1-based (line, col-in-code-points). A call written over several lines is
    matched on any of its lines: the line CPython reports for a running call is not always its
    first one (a method call on a continuation line reports the attribute's line)."""
    spans = {}
    try:
        import ast

        with open(path, "rb") as fh:
            src = fh.read()
        tree = ast.parse(src, path)
        text_lines = src.decode("utf-8", "replace").splitlines()
        by_pos = {}
        by_line = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                end = getattr(node, "end_lineno", None) or node.lineno
                key = (node.lineno, node.col_offset)
                by_pos[key] = max(by_pos.get(key, end), end)
                by_line[node.lineno] = max(by_line.get(node.lineno, node.lineno), end)
        for line, col in wanted:
            byte_col = None
            if 1 <= line <= len(text_lines) and col >= 1:
                byte_col = len(text_lines[line - 1][: col - 1].encode("utf-8"))
            end = by_pos.get((line, byte_col))
            if end is None:
                end = by_line.get(line)
            if end is not None:
                spans[(line, col)] = end
    except Exception:
        pass
    return spans


def _plan_callee(s):
    """The callable to wrap for a plan site, or None."""
    callee = s.get("callee")
    probe = s.get("probe")
    if probe not in _TIMED_PROBES and probe not in _TAG_PROBES:
        return None  # none, gc (gc.callbacks), gpu-used (the shim), unknown
    if not callee:
        if probe in _TIMED_PROBES:
            # A call the static pass could not name: in training code, a model's forward
            # (TL304's `model(x)`), timed as a torch.nn.Module call made from that line.
            return _MODULE_CALL
        return None
    return callee


def _load_plan(path):
    import json

    with open(path, "r", encoding="utf-8") as fh:
        plan = json.load(fh)
    if not isinstance(plan, dict):
        raise ValueError("the plan is not a JSON object")
    if plan.get("version") != 1:
        _note("plan version %r is not 1: probes may not match" % (plan.get("version"),))
    by_file = {}
    for s in plan.get("sites") or []:
        try:
            callee = _plan_callee(s)
            if callee is None:
                continue
            rp = _realpath(s["path"])
            if rp is None:
                continue
            probe = s.get("probe")
            timed = probe in _TIMED_PROBES
            if probe == "data-parallel":
                if callee.rsplit(".", 1)[-1][:1].islower():
                    timed = True  # the functional torch.nn.parallel.data_parallel(): time the call
                else:
                    _S.want_data_parallel = True
            unit = s.get("unit")
            unit = (int(unit[0]), int(unit[1])) if timed and isinstance(unit, list) and len(unit) == 2 else None
            by_file.setdefault(rp, []).append((int(s["line"]), int(s.get("col") or 1), int(s["id"]), callee, timed, unit))
            if timed and callee.rsplit(".", 1)[-1] == "DataLoader":
                # a DataLoader built at a timed site (TL107: built every step): its iterators' start-up
                # and first batch are that construction's cost too, so its records carry the id
                by_file[rp].append((int(s["line"]), int(s.get("col") or 1), int(s["id"]), callee, False, None))
        except Exception:
            continue
    for rp, entries in by_file.items():
        spans = _call_spans(rp, [(e[0], e[1]) for e in entries])
        exact = {}  # (callee, line) -> ([timed ids], [tag ids], [unit])
        extra = {}
        for line, col, sid, callee, timed, unit in entries:
            e = exact.setdefault((callee, line), ([], [], [None]))
            e[0 if timed else 1].append(sid)
            if unit:
                e[2][0] = unit
            end = spans.get((line, col))
            if end is None:
                end = line + 3  # no syntax tree: accept the next lines too
            for ln in range(line + 1, end + 1):
                e = extra.setdefault((callee, ln), ([], [], [None]))
                e[0 if timed else 1].append(sid)
                if unit:
                    e[2][0] = unit
        for (callee, ln), (t, g, u) in exact.items():
            _plan_sites.setdefault(callee, {}).setdefault(rp, {})[ln] = (tuple(t), tuple(g), u[0])
        for (callee, ln), (t, g, u) in extra.items():
            table = _plan_sites.setdefault(callee, {}).setdefault(rp, {})
            if ln not in table:  # an exact site on that line wins
                table[ln] = (tuple(t), tuple(g), u[0])
    if plan.get("step_marker") == "backward":
        _S.backward_steps = True
    if plan.get("step_marker") == "loop":
        _S.loop_steps = True
    loop = plan.get("step_loop")
    if isinstance(loop, dict) and loop.get("path") and loop.get("line"):
        rp = _realpath(loop["path"])
        if rp:
            _S.step_loop = (rp, int(loop["line"]))
    ms = plan.get("max_steps")
    return ms if isinstance(ms, int) else 0


# Objects built at a tagged plan site: object -> tag ids (weak: the program owns its objects).
_tags = None


def _tag(obj, ids):
    global _tags
    try:
        if _tags is None:
            import weakref

            _tags = weakref.WeakKeyDictionary()
        _tags[obj] = ids
    except Exception:
        pass  # not weak-referenceable or not hashable: its records go without an id


def _tags_get(obj):
    if _tags is None:
        return None
    try:
        return _tags.get(obj)
    except Exception:
        return None


def _file_resolver(callee):
    by_real = _plan_sites.setdefault(callee, {})
    cache = _file_tables.setdefault(callee, {})

    def resolve_file(co_filename):
        table = by_real.get(_realpath(co_filename))
        cache[co_filename] = table
        return table

    return cache, resolve_file


# ------------------------------------------------------------------------------------------------
# post-import hooks


_hooks = {}  # module name -> [callable(module)]
_pending = set()  # modules being loaded under our watch


def _when_imported(name, fn):
    mod = sys.modules.get(name)
    if mod is not None and name not in _pending:
        _run_hook(fn, mod, name)
        return
    _hooks.setdefault(name, []).append(fn)


def _run_hook(fn, mod, name):
    try:
        fn(mod)
    except Exception as e:  # a probe that cannot be installed is a note, never an error
        _note("probe on %s not installed: %s: %s" % (name, type(e).__name__, e))


def _fire(name):
    mod = sys.modules.get(name)
    fns = _hooks.pop(name, None)
    if mod is None or not fns:
        if fns:
            _hooks[name] = fns
        return
    for fn in fns:
        _run_hook(fn, mod, name)


class _PostImportFinder(object):
    """Finds nothing itself: for a watched module it asks the finders behind it for the spec and
    wraps that spec's loader instance so the hooks run right after the module's code."""

    def find_spec(self, name, path=None, target=None):
        if name not in _hooks or name in _pending:
            return None
        _pending.add(name)
        try:
            spec = None
            for finder in sys.meta_path:
                if finder is self:
                    continue
                fs = getattr(finder, "find_spec", None)
                if fs is None:
                    continue
                spec = fs(name, path, target) if target is not None else fs(name, path)
                if spec is not None:
                    break
        finally:
            _pending.discard(name)
        loader = getattr(spec, "loader", None) if spec is not None else None
        if loader is None or isinstance(loader, type) or not hasattr(loader, "exec_module"):
            return spec
        try:
            orig_exec = loader.exec_module
            had_attr = "exec_module" in getattr(loader, "__dict__", {})

            def exec_module(module):
                _pending.add(name)
                try:
                    orig_exec(module)
                finally:
                    _pending.discard(name)
                    try:
                        if had_attr:
                            loader.exec_module = orig_exec
                        else:
                            del loader.exec_module
                    except Exception:
                        pass
                _fire(name)

            loader.exec_module = exec_module
        except Exception:
            pass
        return spec

    def invalidate_caches(self):
        pass


# ------------------------------------------------------------------------------------------------
# site timers

_METHOD_OWNERS = {
    # `.method` callees (receiver type unknown to the static pass): the classes that have them.
    "save": [("PIL.Image", "Image")],
    "savefig": [("matplotlib.figure", "Figure")],
    "save_pretrained": [("transformers.modeling_utils", "PreTrainedModel")],
    "save_state": [("accelerate.accelerator", "Accelerator")],
    "save_model": [("accelerate.accelerator", "Accelerator")],
    "save_checkpoint": [("lightning.pytorch.trainer.trainer", "Trainer"), ("pytorch_lightning.trainer.trainer", "Trainer")],
    "add_scalar": [("torch.utils.tensorboard.writer", "SummaryWriter")],
    "add_scalars": [("torch.utils.tensorboard.writer", "SummaryWriter")],
    "add_image": [("torch.utils.tensorboard.writer", "SummaryWriter")],
    "add_images": [("torch.utils.tensorboard.writer", "SummaryWriter")],
    "add_histogram": [("torch.utils.tensorboard.writer", "SummaryWriter")],
    "add_figure": [("torch.utils.tensorboard.writer", "SummaryWriter")],
    "add_text": [("torch.utils.tensorboard.writer", "SummaryWriter")],
}
for _m in ("debug", "info", "warning", "warn", "error", "exception", "critical", "log"):
    _METHOD_OWNERS[_m] = [("logging", "Logger")]
del _m

# A builtin called on a tensor runs the tensor's dunder: time that, never replace the builtin type.
_BUILTIN_TENSOR_DUNDER = {"builtins.float": "__float__", "builtins.int": "__int__", "builtins.bool": "__bool__"}


def _patch_attr(owner, attr, make, what):
    """Replaces owner.attr by make(original), keeping staticmethod/classmethod kinds."""
    raw = None
    if isinstance(owner, type):
        for klass in owner.__mro__:
            if attr in klass.__dict__:
                raw = klass.__dict__[attr]
                break
    current = getattr(owner, attr)
    for done in (current, raw):
        if getattr(done, "__trainlint_wrapped__", False):
            # Already a site wrapper (two callee names for one callable: torch.nn.DataParallel and
            # torch.nn.parallel.DataParallel): its table takes this callee's sites too.
            mine, theirs = getattr(make, "tables", None), getattr(done, "__trainlint_tables__", None)
            if mine is not None and theirs is not None and mine[0] is not theirs[0]:
                _merge_tables(theirs, mine[0])
            return False
    if isinstance(raw, staticmethod):
        new = staticmethod(_finish_wrapper(make(raw.__func__), raw.__func__))
    elif isinstance(raw, classmethod):
        _note("%s is a classmethod: not timed" % what)
        return False
    elif isinstance(owner, type) and raw is not None:
        new = _finish_wrapper(make(raw), raw)
    else:
        new = _finish_wrapper(make(current), current)
    tables = getattr(make, "tables", None)
    if tables is not None:
        (new.__func__ if isinstance(new, staticmethod) else new).__trainlint_tables__ = tables
    setattr(owner, attr, new)
    return True


def _merge_tables(into, by_real):
    """Adds the sites of `by_real` ({realpath: {line: (timed, tags)}}) to a wrapper's tables."""
    into_real, into_cache = into
    for rp, lines in by_real.items():
        table = into_real.setdefault(rp, {})
        for ln, (t, g, u) in lines.items():
            t0, g0, u0 = table.get(ln, ((), (), None))
            table[ln] = (t0 + tuple(i for i in t if i not in t0), g0 + tuple(i for i in g if i not in g0), u0 or u)
    into_cache.clear()  # files are looked up again


def _noop_trace(frame, event, arg):
    return None  # new frames are not traced: only the unit's own frame is


def _begin_unit(frame, ids, t0, unit):
    """Times the caller's statement as a unit: from the flagged call's start until the frame runs
    a line outside the statement's lines, jumps back (the loop around it goes on) or returns.
    Only that frame gets line events; while the unit runs, other new frames cost one call of a
    no-op trace function. A tracer already set (a debugger, coverage) is left alone: the call
    alone is timed then."""
    if sys.gettrace() is not None:
        _emit_site(ids, t0, _mono())
        return
    first, last = unit
    lasti = frame.f_lasti
    state = [frame]

    def finish():
        fr = state[0]
        if fr is None:
            return
        state[0] = None
        _emit_site(ids, t0, _mono())
        try:
            fr.f_trace = None
        except Exception:
            pass
        sys.settrace(None)

    def local(fr, event, arg):
        if event == "line":
            ln = fr.f_lineno
            if ln is None or ln < first or ln > last or fr.f_lasti < lasti:
                finish()
                return None
            return local
        if event == "return":
            finish()
            return None
        return local

    try:
        frame.f_trace_lines = True
        frame.f_trace = local
        sys.settrace(_noop_trace)
    except Exception:
        finish()


def _site_maker(callee):
    files, resolve_file = _file_resolver(callee)

    def make(orig):
        return _W["make_site_wrapper"](orig, files, resolve_file, _emit_site, _mono, _getframe, _tag, _begin_unit)

    make.tables = (_plan_sites.setdefault(callee, {}), files)
    return make


# Callees defined in the entry script (`__main__.FeatureNet`, `__main__.Net.forward`): the script
# runs as `__main__` (a multiprocessing child re-runs it as `__mp_main__`), so its classes exist only
# once its `class` statements run. A wrapper of builtins.__build_class__ patches them then.
_main_wanted = {}  # qualname in the script -> callee
_MAIN_NAMES = ("__main__", "__mp_main__")


_main_functions = set()  # top-level functions of the script still to patch


def _patch_main_functions():
    if not _main_functions:
        return
    for modname in _MAIN_NAMES:
        mod = sys.modules.get(modname)
        d = getattr(mod, "__dict__", None)
        if not d:
            continue
        for name in list(_main_functions):
            fn = d.get(name)
            if fn is not None and getattr(fn, "__code__", None) is not None and not getattr(fn, "__trainlint_wrapped__", False):
                _main_functions.discard(name)
                try:
                    _patch_attr(mod, name, _site_maker(_main_wanted[name]), _main_wanted[name])
                except Exception as e:
                    _note("probe on function %s of the script not installed: %s" % (name, e))


def _after_build_class(cls):
    _patch_main_functions()
    try:
        if not isinstance(cls, type) or cls.__module__ not in _MAIN_NAMES:
            return
        q = cls.__qualname__
        callee = _main_wanted.get(q)
        if callee is not None:
            _patch_attr(cls, "__init__", _site_maker(callee), callee)  # a class at the site: its __init__
        for want, callee in _main_wanted.items():
            if want.startswith(q + ".") and "." not in want[len(q) + 1:]:
                attr = want[len(q) + 1:]
                if attr in cls.__dict__ and callable(getattr(cls, attr, None)):
                    _patch_attr(cls, attr, _site_maker(callee), callee)
    except Exception as e:
        _note("probe on class %s of the script not installed: %s: %s" % (getattr(cls, "__qualname__", "?"), type(e).__name__, e))


def _install_main_site(callee):
    import builtins

    qual = callee[len("__main__."):]
    _main_wanted[qual] = callee
    if "." not in qual:
        # A top-level function of the script is replaced in the script's globals once it exists:
        # looked for when a class is created and when an optimizer is built (the script's functions
        # are defined by then in the usual `def ...` then `main()` layout).
        _main_functions.add(qual)
    orig = builtins.__build_class__
    if not getattr(orig, "__trainlint_wrapped__", False):
        builtins.__build_class__ = _finish_wrapper(_W["make_build_class_wrapper"](orig, _after_build_class), orig)


def _install_site(callee):
    if callee == "gc.collect":
        return  # done by _install_gc, which always wraps gc.collect
    if callee.startswith("__main__."):
        _install_main_site(callee)
        return
    if callee.startswith("."):
        method = callee[1:]
        owners = list(_METHOD_OWNERS.get(method, []))
        owners.append(("torch._tensor", "Tensor"))  # patched only if Tensor has the method
        for mod, cls in owners:
            _when_imported(mod, _class_method_patcher(cls, method, callee, optional=(mod == "torch._tensor")))
        return
    if callee in _BUILTIN_TENSOR_DUNDER:
        _when_imported("torch._tensor", _class_method_patcher("Tensor", _BUILTIN_TENSOR_DUNDER[callee], callee, optional=False))
        return
    parts = callee.split(".")
    if len(parts) < 2:
        _note("callee %r: not a qualified name, not timed" % callee)
        return
    state = {"done": False}
    for i in range(len(parts) - 1, 0, -1):
        _when_imported(".".join(parts[:i]), _qualified_patcher(callee, parts[i:], state))


def _class_method_patcher(cls_name, method, callee, optional):
    def hook(mod):
        cls = getattr(mod, cls_name, None)
        if cls is None or not hasattr(cls, method):
            if not optional:
                _note("%s.%s not found for callee %s" % (mod.__name__, cls_name, callee))
            return
        _patch_attr(cls, method, _site_maker(callee), callee)

    return hook


def _qualified_patcher(callee, attrs, state):
    def hook(mod):
        if state["done"]:
            return
        owner = mod
        for a in attrs[:-1]:
            owner = getattr(owner, a, None)
            if owner is None:
                return  # maybe a later, deeper module import resolves it
        last = attrs[-1]
        target = getattr(owner, last, None)
        if target is None:
            return
        state["done"] = True
        if isinstance(target, type):
            # A class at the site (DataLoader(...), an optimizer, a model): time its __init__; the
            # caller of __init__ is the site's frame because type.__call__ is C code.
            if target.__module__ == "builtins":
                _note("callee %s is a builtin type: not timed" % callee)
                return
            if target.__init__ is object.__init__:
                _note("callee %s has no __init__ of its own: not timed" % callee)
                return
            _patch_attr(target, "__init__", _site_maker(callee), callee)
            return
        if not callable(target):
            _note("callee %s is not callable: not timed" % callee)
            return
        _patch_attr(owner, last, _site_maker(callee), callee)

    return hook


# ------------------------------------------------------------------------------------------------
# GC


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


# ------------------------------------------------------------------------------------------------
# steps


def _stop_at_max_steps():
    # Raised again at every later step: a program whose `except BaseException:` swallowed the
    # first one still stops at its next step.
    if not _S.ended:
        _end("max-steps")
    raise SystemExit(0)


def _on_step(defer=False, now=None):
    """Counts a step. `defer`: --max-steps, when reached, ends the program once the iteration's
    other optimizers have stepped (or the next iteration begins), not in the middle of it."""
    _S.steps += 1
    if _S.steps == 1 and _S.is_child and not _S.promoted:
        _promote("optimizer step")
    n = _S.steps
    if now is None:
        now = _mono()
    try:
        _emit('{"t":"step","n":%d,"end":%d}\n' % (n, now), urgent=True)
        if _S.shim is not None and now - _S.shim_last_flush > 2000000000:
            _S.shim_last_flush = now
            _S.shim.tl_shim_flush()
    except Exception:
        pass
    if _S.max_steps > 0 and n >= _S.max_steps and not _S.worker_flag:
        if defer:
            _S.stop_pending = True
            return
        _stop_at_max_steps()


# ------------------------------------------------------------------------------------------------
# ranks that no environment variable names


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


def _on_optimizer_step(opt=None):
    _S.opt_steps += 1
    if _S.loop_steps:
        return  # steps are the training loop's iterations
    key = id(opt)
    cur = _S.iter_opts
    if cur and key not in cur:
        # another optimizer of the same iteration (a GAN's generator after its discriminator)
        cur.add(key)
        if _S.stop_pending and _S.cycle is not None and cur >= _S.cycle:
            _stop_at_max_steps()
        return
    # a new iteration: the first optimizer to step again closes the previous one
    if cur and _S.cycle is None:
        _S.cycle = frozenset(cur)
    if _S.stop_pending:
        _stop_at_max_steps()
    _S.iter_opts = {key}
    if _S.backward_steps:
        # Steps were being counted at backward() (the analysis saw no optimizer step), and this
        # program does step an optimizer after all: from now on its optimizer steps count.
        _S.backward_steps = False
        if _S.steps > 0:
            _note("an optimizer step ran although the analysis saw none: steps are counted at the optimizer from here")
            return  # this step was counted at its backward()
    _on_step(defer=_S.cycle is None or len(_S.cycle) > 1)


def _on_loop_next(t0):
    """An iteration of the training loop begins (its DataLoader is asked for the next batch): the
    previous iteration ends here. These are the steps when the program has no step marker."""
    _S.loop_iters += 1
    if not _S.loop_steps:
        if _S.loop_iters >= 3 and not _S.steps and not _S.bsteps and not _S.worker_flag:
            # two whole iterations of the training loop and no optimizer step or backward()
            _S.loop_steps = True
            _note("no optimizer step or backward() in the first 2 iterations of the training loop: a step is "
                  "one iteration of that loop")
        else:
            return
    if _S.loop_iters >= 2:
        _on_step(now=t0)


def _loop_iter(it):
    """Remembers the iterator when the training loop's `for` made it (the loop's own frame, or a
    wrapper such as enumerate or tqdm a few frames up)."""
    loop = _S.step_loop
    if loop is None or _S.worker_flag:
        return
    try:
        f = _getframe(2)
        for _ in range(4):
            if f is None:
                return
            if f.f_lineno == loop[1] and _realpath(f.f_code.co_filename) == loop[0]:
                import weakref

                _S.step_it = weakref.ref(it)
                _S.loop_iters = 0
                return
            f = f.f_back
    except Exception:
        pass
    finally:
        f = None


def _on_backward_step(_tensor=None):
    if _S.loop_steps:
        return
    if _S.opt_steps:
        return  # optimizer steps mark this process's steps
    if _S.backward_steps:
        _on_step()  # the plan's marker: a step is one backward()
        return
    # No optimizer step yet: a `bstep` record, in case none ever runs (an optional optimizer left
    # off, a hand-written update). The merge uses them only for a process without optimizer steps.
    _S.bsteps += 1
    try:
        _emit('{"t":"bstep","n":%d,"end":%d}\n' % (_S.bsteps, _mono()))
    except Exception:
        pass


def _hook_autograd(mod):
    """Backward as a step marker: torch.autograd.backward, which Tensor.backward calls (looked up
    at call time)."""
    _patch_attr(mod, "backward", lambda orig: _W["make_step_wrapper"](orig, _S, _on_backward_step),
                "torch.autograd.backward")


def _wrap_step_on(cls):
    if "step" not in cls.__dict__:
        return
    raw = cls.__dict__["step"]
    if getattr(raw, "__trainlint_wrapped__", False) or not callable(raw):
        return
    setattr(cls, "step", _finish_wrapper(_W["make_step_wrapper"](raw, _S, _on_optimizer_step), raw))


def _after_optimizer_init(opt):
    _patch_main_functions()
    try:
        # torch wraps type(self).step for its profiler in Optimizer.__init__; wrap the class that
        # defines the step this instance runs (once per class).
        for klass in type(opt).__mro__:
            if "step" in klass.__dict__:
                _wrap_step_on(klass)
                break
    except Exception:
        pass


def _hook_optimizer(mod):
    opt = getattr(mod, "Optimizer", None)
    if opt is None:
        return
    _patch_attr(opt, "__init__", lambda orig: _W["make_after_init_wrapper"](orig, _after_optimizer_init), "Optimizer.__init__")
    if "__setstate__" in opt.__dict__:  # an optimizer unpickled in a spawned process
        _patch_attr(opt, "__setstate__", lambda orig: _W["make_after_init_wrapper"](orig, _after_optimizer_init),
                    "Optimizer.__setstate__")


def _hook_grad_scaler(mod):
    gs = getattr(mod, "GradScaler", None)
    if gs is not None:
        _wrap_step_on(gs)


# ------------------------------------------------------------------------------------------------
# data loading


def _hook_dataloader(mod):
    it = getattr(mod, "_BaseDataLoaderIter", None)
    if it is not None and "__next__" in it.__dict__:
        _patch_attr(
            it, "__next__", lambda orig: _W["make_next_wrapper"](orig, _S, _emit_wait, _mono, _tags_get, _on_loop_next),
            "DataLoader __next__")
    mp_it = getattr(mod, "_MultiProcessingDataLoaderIter", None)
    if mp_it is not None and "_shutdown_workers" in mp_it.__dict__:
        # the other half of a loader's worker start-up: its workers' shutdown (an iterator dropped
        # every step pays it every step); recorded for iterators of a loader built at a plan site
        _patch_attr(mp_it, "_shutdown_workers",
                    lambda orig: _W["make_tagged_method_wrapper"](orig, _tags_get, _emit_istop, _mono),
                    "DataLoader iterator _shutdown_workers")
    dl = getattr(mod, "DataLoader", None)
    if dl is not None and "__iter__" in dl.__dict__:
        _patch_attr(
            dl, "__iter__", lambda orig: _W["make_iter_wrapper"](orig, _emit_iter, _mono, _tags_get, _tag, _loop_iter),
            "DataLoader.__iter__")


def _hook_data_parallel(mod):
    """TL301's probe: time spent in replicate/scatter/parallel_apply/gather of a DataParallel built
    at a flagged site (on one GPU or none, DataParallel.forward calls none of them)."""
    dp = getattr(mod, "DataParallel", None)
    if dp is None:
        return
    for name in ("replicate", "scatter", "parallel_apply", "gather"):
        if name in dp.__dict__:
            _patch_attr(dp, name, lambda orig: _W["make_tagged_method_wrapper"](orig, _tags_get, _emit_site, _mono),
                        "DataParallel." + name)


def _hook_worker(mod):
    orig = getattr(mod, "_worker_loop", None)
    if orig is None or getattr(orig, "__trainlint_wrapped__", False):
        return
    wid_index = None
    try:
        names = orig.__code__.co_varnames[: orig.__code__.co_argcount]
        wid_index = list(names).index("worker_id")
    except Exception:
        pass

    def started(args, kwargs):
        try:
            _S.worker_flag = True
            wid = kwargs.get("worker_id")
            if wid is None and wid_index is not None and len(args) > wid_index:
                wid = args[wid_index]
            _S.worker_id = wid
            _S.immediate = True
            if _S.proc_written:
                return
            _write_proc()
            _flush()
        except Exception:
            pass

    def finished():
        try:
            _end("exit")
        except Exception:
            pass

    mod._worker_loop = _finish_wrapper(_W["make_worker_loop_wrapper"](orig, started, finished), orig)


# ------------------------------------------------------------------------------------------------
# exit paths and fork


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


# ------------------------------------------------------------------------------------------------
# the shim (GPU side)


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


def _split_status(status, rc):
    """tl_shim_status()'s "ok" / "<state>: <reason>" as (state, reason)."""
    if status == "ok":
        state, reason = "ok", ""
    elif ": " in status:
        state, reason = status.split(": ", 1)
    else:
        state, reason = "unavailable", status or "the shim gave no status"
    if rc != 0 and state == "ok":
        state, reason = "unavailable", "tl_shim_start returned %d" % rc
    return state, reason


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


# ------------------------------------------------------------------------------------------------
# install


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
