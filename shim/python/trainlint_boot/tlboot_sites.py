"""Site timers: the callables that the plan's sites name are wrapped, as their modules are
imported (qualified names, `.method` callees, builtins on tensors) or as the entry script defines
them (`__main__.X`)."""
import sys

from .tlboot_imports import _when_imported
from .tlboot_plan import _file_resolver, _plan_sites, _tag
from .tlboot_records import _emit_site, _note
from .tlboot_state import _getframe, _mono
from .tlboot_units import _begin_unit
from .tlboot_wrappers import _W, _finish_wrapper, _patch_attr


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
