#!@PYTHON@
"""opcheck repro of @CASE_ID@: @CASE_OP@ on cpu and on the device under test, without opcheck.

Case: @CASE_LOCATION@
@INPUTS_FROM@
@FAILURE_RECORDED@Run: python3 THIS.py [--device DEV] [--device-lib PATH] [--out DIR]
Exit status: 0 the device agrees with the cpu, 1 it does not (or one of them raised), 2 a bundle's saved
output was not reproduced bit for bit, 3 the device is not registered in this Python.
Read from here: call() is the op call, inputs() its tensors, COMPARE the check; the device's set-up and opcheck's
judgement (the rule the run applies) follow them.
"""
DEVICE = @DEVICE@
COMPARE = @COMPARE@  # the check: the device's outputs against the cpu's, as opcheck judges them (judge() below)
RTOL, ATOL = @RTOL@, @ATOL@  # None: torch.testing.assert_close's default for the dtype
PCC_MIN = @PCC_MIN@
EQUAL_NAN = @EQUAL_NAN@
EXPECTED_ERROR = @EXPECTED_ERROR@
