
def inputs():
    """The case's tensors on the host, one per tensor argument, as opcheck builds them."""
@BUILD_INPUTS@    return [@INPUT_NAMES@]


HOST_INPUTS = @HOST_INPUTS@  # placed on the host (device: cpu in the manifest) in the device run too
