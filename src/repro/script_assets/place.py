
def place(values, shape, stride, offset):
    """The tensor opcheck hands the op: the values in a zeroed storage of the layout's extent, viewed with
    the manifest's stride and storage offset (a stride-0 dim holds one value)."""
    value_shape = [1 if st == 0 and n > 1 else n for n, st in zip(shape, stride)]
    for d, n in enumerate(value_shape):
        values = values.narrow(d, 0, n)
    extent = offset + (1 + sum((n - 1) * st for n, st in zip(value_shape, stride)) if values.numel() else 0)
    storage = torch.zeros(extent, dtype=values.dtype)
    storage.as_strided(value_shape, stride, offset).copy_(values)
    return storage.as_strided(shape, stride, offset)

