"""The probe plan (TRAINLINT_PLAN): callee -> {real path: {line: (timed ids, tag ids, unit)}},
the per-callee file tables the site wrappers look lines up in, and the objects built at tagged
plan sites."""
import os

from .tlboot_records import _note
from .tlboot_state import _S


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
