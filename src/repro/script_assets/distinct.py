
def distinct(low, high, shape, dim, dtype):
    """Values in [low, high), no two equal along dim (dim None: none equal at all), as opcheck draws the index of an
    op whose result is undefined where indices repeat: per line, k sorted draws from [0, high - low - k + 1) plus
    0..k-1 (each shifted past those below it), in a random order."""
    drawn = [math.prod(shape)] if dim is None else list(shape)
    along = 0 if dim is None else dim
    k = drawn[along]
    place = [1] * len(drawn)
    place[along] = k
    picked = torch.randint(0, high - low - k + 1, drawn).sort(dim=along).values + torch.arange(k).reshape(place)
    order = torch.rand(drawn).argsort(dim=along, stable=True)
    return (picked.gather(along, order) + low).reshape(shape).to(dtype)
