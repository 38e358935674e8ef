

def call(t, device):
    """The case's op call on tensors `t`; `device` is what a device argument of the manifest means in this run."""
@OP@
    return op(@CALL_ARGS@)
