"""DataLoader hooks: the iterator's __next__ (data waits), iter(DataLoader) (worker start-up), the
workers' shutdown, DataParallel's methods, and the worker processes' own records."""
from .tlboot_plan import _tag, _tags_get
from .tlboot_records import _emit_istop, _emit_iter, _emit_site, _emit_wait, _end, _flush, _thread_faults, _write_proc
from .tlboot_state import _S, _mono
from .tlboot_steps import _loop_iter, _on_loop_next
from .tlboot_wrappers import _W, _finish_wrapper, _patch_attr


def _hook_dataloader(mod):
    it = getattr(mod, "_BaseDataLoaderIter", None)
    if it is not None and "__next__" in it.__dict__:
        _patch_attr(
            it, "__next__",
            lambda orig: _W["make_next_wrapper"](orig, _S, _emit_wait, _mono, _tags_get, _on_loop_next, _thread_faults),
            "DataLoader __next__")
    mp_it = getattr(mod, "_MultiProcessingDataLoaderIter", None)
    if mp_it is not None and "_shutdown_workers" in mp_it.__dict__:
        # the other half of a loader's worker start-up: its workers' shutdown (an iterator dropped
        # every step pays it every step); recorded for iterators of a loader built at a plan site
        _patch_attr(mp_it, "_shutdown_workers",
                    lambda orig: _W["make_tagged_method_wrapper"](orig, _tags_get, _emit_istop, _mono, _thread_faults),
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
