
def scaled(r, low, high):
    """make_tensor's values in [low, high) from torch.rand's r (opcheck's rand/uniform with low/high)."""
    return high * r + low * (1 - r)

