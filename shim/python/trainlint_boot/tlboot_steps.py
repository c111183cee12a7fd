"""Step marking: optimizer steps (a GAN's optimizers of one iteration make one step), backward()
when the program steps no optimizer, or the training loop's iterations; TRAINLINT_MAX_STEPS ends
the program cleanly."""
from .tlboot_plan import _realpath
from .tlboot_records import _emit, _emit_cow, _end, _note
from .tlboot_roles import _promote
from .tlboot_sites import _patch_main_functions
from .tlboot_state import _S, _getframe, _mono
from .tlboot_wrappers import _W, _finish_wrapper, _patch_attr


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
        if _S.cow is not None:
            _emit_cow(now)
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
