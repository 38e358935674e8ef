
def lowp(dtype):
    """A dtype argument: the wider dtype while the reference runs in it, as opcheck passes it then."""
    if UPCAST is None or torch.finfo(dtype).bits > torch.finfo(UPCAST).bits:
        return dtype
    return UPCAST


def call(t, device):
    """The case's op call on tensors `t`; `device` is what a device argument of the manifest means in this run."""
@OP@
    return op(@CALL_ARGS@)


