"""Post-import hooks: torch, PIL and the others are patched right after their first import,
through a sys.meta_path finder that watches only the modules a probe needs."""
import sys

from .tlboot_records import _note


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
