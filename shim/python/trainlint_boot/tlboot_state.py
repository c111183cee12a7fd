"""The bootstrap's state in this process: one _State object (_S) that every module reads and
writes, and the records' clock."""
import sys
import time

_mono = time.monotonic_ns  # CLOCK_MONOTONIC on Linux: the records' clock
_getframe = sys._getframe


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
    # the copy-on-write window a tagged iterator's fork opened (tlboot_records._cow_open):
    # [loader id, faults at open, faults inside the loader's own intervals, faults at the
    # shutdown's start, faults at its end, first wait seen]
    cow = None
    cow_seen = False  # a `cow` record was written: price a fault at exit (`fault_cost`)


_S = _State()
