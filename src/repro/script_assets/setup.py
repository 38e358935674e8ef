

# ---- How the script runs the call where the run did: the interpreter, the device's set-up, then opcheck's rule ----
import os  # noqa: E402
import sys  # noqa: E402

# The interpreter the run hosted the device in (OPCHECK_PYTHON), else the one opcheck was built against, whose torch
# this script needs: `python3 THIS.py` under another interpreter (the system's python3 beside a virtual environment,
# which may be the same binary) runs the script again under that one, once.
OPCHECK_PYTHON = @PYTHON_STR@
RUN_PYTHON = @RUN_PYTHON@  # the run's OPCHECK_PYTHON (None: unset)
if os.path.exists(OPCHECK_PYTHON) and not os.environ.get("OPCHECK_REPRO_REEXEC"):
    import importlib.util

    if importlib.util.find_spec("torch") is None or (RUN_PYTHON and os.path.abspath(sys.executable) != RUN_PYTHON):
        os.environ["OPCHECK_REPRO_REEXEC"] = "1"
        os.execv(OPCHECK_PYTHON, [OPCHECK_PYTHON, os.path.abspath(__file__), *sys.argv[1:]])

# Must precede the first torch import: keeps oneDNN's bfloat16 kernels below AMX, as opcheck does where Linux does
# not grant a process AMX (its first AMX instruction would raise SIGILL).
os.environ.setdefault("ONEDNN_MAX_CPU_ISA", "AVX512_CORE_BF16")
# The run's environment as a rerun carries it (opcheck/device_environment.h), set before torch loads: the device's
# faults and modes, and torch's autoload switch.
@DEVICE_ENVIRONMENT@
DEVICE_LIB = @DEVICE_LIB@  # PrivateUse1 backend loaded before the run (None: none)
DEVICE_IMPORTS = @DEVICE_IMPORTS@  # modules whose import registers the device (--device-import)
PYTHON_PATH = @PYTHON_PATH@  # opcheck's own Python packages, for DEVICE_IMPORTS
DEVICE_PATHS = @DEVICE_PATHS@  # the run's PYTHONPATH entries that hold the device's modules or installed backend
# First on sys.path before torch loads: torch's autoload finds a backend's torch.backends entry point there.
sys.path[:0] = [p for p in DEVICE_PATHS if p not in sys.path]
import argparse  # noqa: E402
import importlib  # noqa: E402
import math  # noqa: E402,F401
import operator  # noqa: E402,F401
import re  # noqa: E402
import types  # noqa: E402

import torch  # noqa: E402

COMPILE_BACKEND = @COMPILE_BACKEND@  # the device call runs through torch.compile with this backend (None: eagerly)
BUNDLE = @BUNDLE@
WRITTEN = @WRITTEN@  # tensor arguments the op writes in place (as the bundle recorded them)
LOW_PRECISION = (torch.float16, torch.bfloat16)
REFUSED = None  # the cpu's error when it refused the call's precision and float64 stood in
GOLDEN = None  # the float64 result and arguments, once computed
UPCAST = None  # the wider dtype the cpu runs in: float32 where its kernels lack the dtype, float64 for the judge


def lowp(dtype):
    """A dtype argument: the wider dtype while the reference runs in it, as opcheck passes it then."""
    if UPCAST is None or torch.finfo(dtype).bits > torch.finfo(UPCAST).bits:
        return dtype
    return UPCAST
