"""Statement units: a flagged call whose whole statement is the cost (a plan site with a `unit`)
is timed from the call's start until its caller's frame leaves the statement's lines."""
import sys

from .tlboot_records import _emit_site
from .tlboot_state import _mono


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
