"""The wrappers that replace the program's callables, and how they are put in place (_patch_attr).

The wrappers are compiled under a file name the warnings module skips when it counts
`stacklevel` (CPython: frames whose file name contains both "importlib" and "_bootstrap" are
import-internal), so a library warning issued from a wrapped function names the program's line."""
from .tlboot_records import _note


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


def make_next_wrapper(orig, S, emit_wait, mono, tags_get, on_loop_next, faults):
    def __next__(self):
        try:
            if S.worker_flag:
                return orig(self)
            t0 = mono()
            if S.step_it is not None and S.step_it() is self:
                on_loop_next(t0)  # an iteration of the training loop begins (may end the program)
            f0 = faults() if S.cow is not None else None  # a copy-on-write window is open
            try:
                return orig(self)
            finally:
                emit_wait(t0, mono(), tags_get(self), f0)
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
            except BaseException:
                emit_iter(t0, mono(), ids, None)  # no loader: started nothing to follow
                raise
            # the shim's own bookkeeping inside the interval: after a fork every page it writes is
            # a copy-on-write fault, time that would otherwise fall between the loader's intervals
            if ids:
                tag(it, ids)  # the iterator's waits belong to this loader
            loop_iter(it)
            emit_iter(t0, mono(), ids, self)
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


def make_tagged_method_wrapper(orig, tags_get, emit_site, mono, faults=None):
    # Times a method of an object built at a tagged plan site (DataParallel.replicate & co, a
    # DataLoader iterator's _shutdown_workers). With `faults`, emit_site also gets the thread's
    # minor faults when the call began (the copy-on-write window of a loader's fork).
    def method(self, *args, **kwargs):
        try:
            ids = tags_get(self)
            if not ids:
                return orig(self, *args, **kwargs)
            f0 = faults() if faults is not None else None
            t0 = mono()
            try:
                return orig(self, *args, **kwargs)
            finally:
                if faults is None:
                    emit_site(ids, t0, mono())
                else:
                    emit_site(ids, t0, mono(), f0)
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
