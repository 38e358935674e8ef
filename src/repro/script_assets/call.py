
def lowp(dtype):
    """A dtype argument: float32 while the reference is upcast, as opcheck passes it then."""
    return torch.float32 if UPCAST and dtype in LOW_PRECISION else dtype


def call(t, device):
    """The case's op call on tensors `t`; `device` is what a device argument of the manifest means in this run."""
@OP@
    return op(@CALL_ARGS@)


