"""The records writer: this process's rec-<pid>.jsonl (docs/runtime-protocol.md), its `proc` line
first and its `end` line last, buffered and written in whole lines with O_APPEND (the shim appends
its `gpu` lines to the same file)."""
import os
import resource
import time
import sys

from .tlboot_state import _S, _mono


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

    from .tlboot_roles import _rank, _role  # here, not at the top: roles writes records itself

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


def _emit_loader(kind, t0, t1, ids, extra=""):
    """A DataLoader `wait` (next batch) or `iter` (worker start-up) record, tagged with the
    plan id of the DataLoader's site when the loader was built at one (`extra`: more fields of a
    tagged one, `,"from":...`)."""
    try:
        if ids:
            _emit('{"t":"%s","start":%d,"end":%d,"id":%d%s}\n' % (kind, t0, t1, ids[0], extra))
        else:
            _emit('{"t":"%s","start":%d,"end":%d}\n' % (kind, t0, t1))
    except Exception:
        pass


def _thread_faults():
    """Minor page faults of the calling thread (Linux), or None."""
    try:
        return resource.getrusage(resource.RUSAGE_THREAD).ru_minflt
    except Exception:
        return None


class _CowWindow:
    """The copy-on-write window a tagged loader's iterator opened by forking its workers."""
    __slots__ = ("id", "f_open", "f_inside", "f_stop0", "f_stop1", "waited", "where", "iter_end", "wait_where",
                 "wait_end", "f_wait_end")

    def __init__(self, loader_id, faults, where, iter_end):
        self.id = loader_id
        self.f_open = faults      # the thread's minor faults at the fork (iter() returning)
        self.f_inside = 0         # faults inside the intervals the report removes (the first batch)
        self.f_stop0 = None       # faults when the shutdown began, and when it ended
        self.f_stop1 = None
        self.waited = False       # the first batch was taken
        self.where = where        # the program's frame and line that called iter()
        self.iter_end = iter_end
        self.wait_where = None    # ... and that took the first batch, when, and the faults then
        self.wait_end = 0
        self.f_wait_end = None


def _program_frame(depth):
    """(id, code, line) of the nearest frame at or above `depth` that is neither the shim's nor
    torch.utils.data's: the program's statement that drove the loader."""
    try:
        f = sys._getframe(depth + 1)
        while f is not None:
            fn = f.f_code.co_filename
            if "trainlint_boot" not in fn and "torch/utils/data/" not in fn.replace("\\", "/"):
                return (id(f), f.f_code, f.f_lineno)
            f = f.f_back
    except Exception:
        pass
    finally:
        f = None
    return None


def _cow_open(ids, loader, t1):
    """A tagged loader's iterator has just started its workers (fork): from here to the end of the
    step, the write faults the thread takes outside the loader's own intervals (its first batch,
    its shutdown) are the copy-on-write that fork left: while the workers live (the shim's and the
    program's writes between the intervals) and after their shutdown (the rest of the step)."""
    if not ids or _S.worker_flag or _S.cow is not None:
        return
    try:
        if int(getattr(loader, "num_workers", 0) or 0) <= 0:
            return
    except Exception:
        return
    f = _thread_faults()
    if f is not None:
        _S.cow = _CowWindow(ids[0], f, _program_frame(2), t1)


def _emit_istop(ids, t0, t1, f0=None):
    """An `istop` record: a tagged iterator shutting its workers down (`f0`: the thread's faults
    when it began). `from`: the end of its first batch, when the statement that took that batch
    is the one dropping the iterator (`next(iter(loader))`): nothing of the program ran between."""
    try:
        if ids and not _S.worker_flag:
            c = _S.cow
            joined = ""
            if c is not None and f0 is not None and c.id == ids[0] and c.f_stop0 is None:
                f1 = _thread_faults()
                if f1 is not None:
                    c.f_stop0, c.f_stop1 = f0, f1
                if c.wait_where is not None and _program_frame(2) == c.wait_where:
                    joined = ',"from":%d' % c.wait_end
                    if c.f_wait_end is not None:
                        c.f_inside += f0 - c.f_wait_end  # the joined gap's faults are in its time
            _emit('{"t":"istop","start":%d,"end":%d,"id":%d%s}\n' % (t0, t1, ids[0], joined))
    except Exception:
        pass


def _emit_cow(now):
    """At a step's end: the `cow` record of the window a tagged iterator opened: `live_faults`
    from its fork to its shutdown (outside its first batch), `faults` after the shutdown. A window
    whose iterator is still alive goes on into the next step."""
    c = _S.cow
    if c is None:
        return
    f = _thread_faults()
    if f is None:
        _S.cow = None
        return
    if c.f_stop0 is None:
        live, dead = f - c.f_open - c.f_inside, 0
        c.f_open, c.f_inside = f, 0
    else:
        live, dead = c.f_stop0 - c.f_open - c.f_inside, f - c.f_stop1
        _S.cow = None
    if live < 0 or dead < 0:
        return
    _emit('{"t":"cow","at":%d,"id":%d,"faults":%d,"live_faults":%d}\n' % (now, c.id, dead, live))
    _S.cow_seen = True


def _fault_cost():
    """What one copy-on-write write fault costs on this machine, in ns: (pages written after a fork
    whose child has exited, as a step's pages are after its DataLoader's workers are gone; pages
    written while the child lives, as between the workers' start and their shutdown). Measured
    once, at exit, only in a process that wrote `cow` records."""
    pages = 256

    def measure(live):
        buf = bytearray(pages * 4096)
        for i in range(0, len(buf), 4096):
            buf[i] = 1
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            # the child must do nothing at all: os._exit is wrapped (tlboot_exits) and would end the
            # records, and with them measure again, in a chain of forks
            _S.ended = True
            _S.cow_seen = False
            try:
                os.close(w)
                os.read(r, 1)  # until the parent is done writing (or at once: it closed the pipe)
            finally:
                os._exit(0)
        os.close(r)
        try:
            if not live:
                os.close(w)
                w = None
                os.waitpid(pid, 0)
            f0 = _thread_faults()
            t0 = time.perf_counter_ns()
            for i in range(0, len(buf), 4096):
                buf[i] = 2
            t1 = time.perf_counter_ns()
            f1 = _thread_faults()
        finally:
            if w is not None:
                os.close(w)
                os.waitpid(pid, 0)
        if f0 is None or f1 is None or f1 - f0 < pages // 2:
            return None  # no copy-on-write here (another kernel): nothing to price
        return (t1 - t0) // (f1 - f0)

    # the median of three of each: one sample moves with the machine's load
    dead = sorted(x for x in (measure(False) for _ in range(3)) if x)
    live = sorted(x for x in (measure(True) for _ in range(3)) if x)
    return (dead[len(dead) // 2] if dead else None, live[len(live) // 2] if live else None)


def _emit_wait(t0, t1, ids, f0=None):
    """A `wait` record (`f0`: the thread's faults when it began, while a copy-on-write window is
    open: the faults of the iterator's first batch are inside an interval the report removes).
    `from`: the end of the iterator's start-up, when the statement that called iter() takes its
    first batch (`for batch in loader`, `next(iter(loader))`): nothing of the program ran between."""
    c = _S.cow
    joined = ""
    if c is not None and f0 is not None and ids and c.id == ids[0] and not c.waited:
        f1 = _thread_faults()
        c.waited = True
        where = _program_frame(2)
        joins = where is not None and where == c.where
        if joins:
            joined = ',"from":%d' % c.iter_end
        if f1 is not None:
            # the wait's faults are in its interval; a joined gap's are in the gap's time
            c.f_inside += f1 - (c.f_open if joins else f0)
        c.wait_where, c.wait_end, c.f_wait_end = where, t1, f1
    _emit_loader("wait", t0, t1, ids, joined)


def _emit_iter(t0, t1, ids, loader=None):
    """`iter` also says how many workers the loader starts (`workers`), so that the report names
    the right cause of a data wait."""
    _cow_open(ids, loader, t1)  # first: the faults of what follows the fork count
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
        if (_S.records_dir is not None and _S.cow_seen and reason in ("exit", "max-steps") and not _S.is_child
                and not _S.worker_flag and _S.pid == os.getpid()):
            try:
                dead, live = _fault_cost()
                if dead:
                    _emit('{"t":"fault_cost","ns":%d%s}\n' % (dead, ',"live_ns":%d' % live if live else ""))
            except Exception:
                pass
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
