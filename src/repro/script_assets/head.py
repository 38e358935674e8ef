#!@PYTHON@
"""opcheck repro of @CASE_ID@: @CASE_OP@ on cpu and on the device under test, without opcheck.

Case: @CASE_LOCATION@
@INPUTS_FROM@
@FAILURE_RECORDED@
Run: python3 THIS.py [--device DEV] [--device-lib PATH] [--out DIR]
Exit status: 0 the device agrees with the cpu, 1 it does not (or one of them raised), 2 a bundle's saved
output was not reproduced bit for bit.
"""
import os
import sys

# The interpreter opcheck was built against, whose torch this script needs: `python3 THIS.py` under an interpreter
# without torch (the system's python3 beside a virtual environment, which may be the same binary) runs the script
# again under that one, once.
OPCHECK_PYTHON = @PYTHON_STR@
if os.path.exists(OPCHECK_PYTHON) and not os.environ.get("OPCHECK_REPRO_REEXEC"):
    import importlib.util

    if importlib.util.find_spec("torch") is None:
        os.environ["OPCHECK_REPRO_REEXEC"] = "1"
        os.execv(OPCHECK_PYTHON, [OPCHECK_PYTHON, os.path.abspath(__file__), *sys.argv[1:]])

# Must precede the first torch import: keeps oneDNN's bfloat16 kernels below AMX, as opcheck does where Linux does
# not grant a process AMX (its first AMX instruction would raise SIGILL).
os.environ.setdefault("ONEDNN_MAX_CPU_ISA", "AVX512_CORE_BF16")
@DEVICE_ENVIRONMENT@
import argparse  # noqa: E402
import importlib  # noqa: E402
import math  # noqa: E402,F401
import operator  # noqa: E402,F401
import re  # noqa: E402
import types  # noqa: E402

import torch  # noqa: E402

DEVICE = @DEVICE@
DEVICE_LIB = @DEVICE_LIB@  # PrivateUse1 backend loaded before the run (None: none)
DEVICE_IMPORTS = @DEVICE_IMPORTS@  # modules whose import registers the device (--device-import)
PYTHON_PATH = @PYTHON_PATH@  # opcheck's own Python packages, for DEVICE_IMPORTS
DEVICE_PATHS = @DEVICE_PATHS@  # the run's PYTHONPATH entries that hold DEVICE_IMPORTS
COMPILE_BACKEND = @COMPILE_BACKEND@  # the device call runs through torch.compile with this backend (None: eagerly)
BUNDLE = @BUNDLE@
WRITTEN = @WRITTEN@  # tensor arguments the op writes in place (as the bundle recorded them)
COMPARE = @COMPARE@
RTOL, ATOL = @RTOL@, @ATOL@  # None: torch.testing.assert_close's default for the dtype
PCC_MIN = @PCC_MIN@
EQUAL_NAN = @EQUAL_NAN@
EXPECTED_ERROR = @EXPECTED_ERROR@
LOW_PRECISION = (torch.float16, torch.bfloat16)
REFUSED = None  # the cpu's error when it refused the call's precision and float64 stood in
GOLDEN = None  # the float64 result and arguments, once computed
UPCAST = None  # the wider dtype the cpu runs in: float32 where its kernels lack the dtype, float64 for the judge

