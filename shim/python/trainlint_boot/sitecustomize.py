"""trainlint's sitecustomize: installs trainlint_boot, then runs the sitecustomize that the
program would have run without trainlint (the next one on sys.path), so injection changes nothing
the program can see.

Layouts it accepts (the folder that holds this file is the PYTHONPATH entry):
- the package folder itself: <dir>/sitecustomize.py next to <dir>/__init__.py (the source tree,
  shim/python/trainlint_boot/);
- a boot folder: <dir>/sitecustomize.py next to <dir>/trainlint_boot/__init__.py;
- otherwise `import trainlint_boot` from sys.path.
"""


def _trainlint_install(here):
    import os
    import sys

    mod = sys.modules.get("trainlint_boot")
    if mod is None:
        for init in (os.path.join(here, "__init__.py"), os.path.join(here, "trainlint_boot", "__init__.py")):
            if os.path.isfile(init):
                import importlib.util

                spec = importlib.util.spec_from_file_location(
                    "trainlint_boot", init, submodule_search_locations=[os.path.dirname(init)])
                mod = importlib.util.module_from_spec(spec)
                sys.modules["trainlint_boot"] = mod
                try:
                    spec.loader.exec_module(mod)
                except BaseException:
                    sys.modules.pop("trainlint_boot", None)
                    raise
                break
        else:
            import trainlint_boot as mod
    mod.install()


def _trainlint_chain(here):
    """Imports the next `sitecustomize` on sys.path (our folder taken out meanwhile). Its errors
    propagate as they would have without us: site.py reports them the same way."""
    import os
    import sys

    me = sys.modules.get("sitecustomize")
    real_here = os.path.realpath(here)
    removed = []
    for i in range(len(sys.path) - 1, -1, -1):
        entry = sys.path[i]
        try:
            same = os.path.realpath(entry or os.getcwd()) == real_here
        except Exception:
            same = False
        if same:
            removed.append((i, entry))
            del sys.path[i]
    if not removed:
        return
    sys.modules.pop("sitecustomize", None)
    try:
        import sitecustomize  # noqa: F401  (the next one; it stays in sys.modules as the program's)
    except ImportError as e:
        if getattr(e, "name", None) != "sitecustomize":
            raise
        if me is not None:
            sys.modules["sitecustomize"] = me
    finally:
        for i, entry in sorted(removed):
            sys.path.insert(min(i, len(sys.path)), entry)


def _trainlint_main():
    import os

    here = os.path.dirname(os.path.abspath(__file__))
    try:
        _trainlint_install(here)
    except Exception:
        pass  # never break the program: without the bootstrap it runs unmeasured
    _trainlint_chain(here)


_trainlint_main()
