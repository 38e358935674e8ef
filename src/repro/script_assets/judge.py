
# opcheck's judgement, as the run applies it (docs/judgement.md); the tables are opcheck's own
# (src/judge/backend_freedoms_table.cpp), written here when the script was.
JUDGE_MULTIPLE = @JUDGE_MULTIPLE@  # times the cpu reference's distance from float64 an element may be from it
WIDENED_OUTPUTS = @WIDENED_OUTPUTS@  # op: output places a backend may return in float32 for float16/bfloat16
NONDETERMINISTIC = @NONDETERMINISTIC@  # op: (bool argument that must be true, or None; torch's words)
# The comparators (include/opcheck/comparators.h): name: (bitwise, float64 judge), and each one's verdict on a
# floating tensor leaf once the tolerance check has run.
COMPARATORS = @COMPARATORS@
@COMPARATOR_VERDICTS@
WRITES = @WRITES@  # ops whose result is undefined where an index repeats (any overload)
TIES = @TIES@  # op: (place of its index output, whether it reduces the dim); "aten::max.dim": that overload only
CALLED = []  # (aten op, its arguments by name) of each call the cpu reference dispatched, outermost first


class Dispatched(torch.utils._python_dispatch.TorchDispatchMode):
    """Records the aten ops a call dispatches (the first is the op as resolved). In a wider run (`wide`), a
    half-to-float conversion asks for no conversion: its input is no longer float16, as opcheck runs it then. With
    `override` (name, value), the first op gets that argument so (the accumulation bound counts terms so)."""

    def __init__(self, wide=False, override=None):
        super().__init__()
        self.wide = wide
        self.override = override

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        names = [a.name for a in func._schema.arguments]
        named = dict(zip(names, args), **kwargs)
        override, self.override = self.override, None  # the first op's only: the op as resolved
        if override is not None and override[0] in names:
            name, value = override
            place = names.index(name)
            if place < len(args):
                args = tuple(value if k == place else a for k, a in enumerate(args))
            else:
                kwargs[name] = value
            named[name] = value
        if self.wide and named.get("half_to_float") is True:
            args = tuple(False if n == "half_to_float" else a for n, a in zip(names, args))
            kwargs = {k: (False if k == "half_to_float" else v) for k, v in kwargs.items()}
        if not CALLED:
            overload = func._overloadname
            CALLED.append(("aten::" + func._schema.name.split("::")[-1] + ("" if overload == "default" else "." + overload),
                           {n: (a.clone() if isinstance(a, torch.Tensor) else a) for n, a in named.items()}))
        return func(*args, **kwargs)


def resolved():
    return CALLED[0] if CALLED else (None, {})


def base(op):
    return op.split(".")[0] if op else op


def step(g_abs, dtype):
    """One step (unit in the last place) of `dtype` at each |value|, in float64."""
    digits, emin = {torch.float16: (10, -14), torch.complex32: (10, -14), torch.bfloat16: (7, -126),
                    torch.float32: (23, -126), torch.complex64: (23, -126)}.get(dtype, (52, -1022))
    _, e = torch.frexp(g_abs)
    e = torch.where(g_abs == 0, torch.full_like(e, emin), (e - 1).clamp(min=emin)).double()
    return torch.exp2(e - digits)


def judged(e, a, g, rtol, atol, dtype, close, allowance=None):
    """`close` (per part) with the float64 judge's: within atol + rtol|g| + JUDGE_MULTIPLE |e - g| + one step; for an
    op that accumulates (`allowance`: its accumulation bound, per element), the larger of JUDGE_MULTIPLE |e - g| and
    the bound. Also counts the elements only the bound let through."""
    dg, eg = (a - g).abs(), (e - g).abs()
    eg = torch.where(torch.isfinite(e), eg, torch.zeros_like(eg))
    own, rest = JUDGE_MULTIPLE * eg, atol + rtol * g.abs() + step(g.abs(), dtype)
    bound = (own if allowance is None else torch.maximum(own, allowance)) + rest
    within = ((dg <= bound) & torch.isfinite(g)) | (a == g)
    rescued = int((within & ~close).sum())
    further = int((within & ~close & (eg > dg)).sum())
    only_bound = 0 if allowance is None else int((within & ~(dg <= own + rest) & ~close).sum())
    return close | within, rescued, further, only_bound


def take_writers(expected, device):
    """Positions written more than once take the device's value where it is one of the values written there."""
    op, args = resolved()
    self = args.get("self")
    if base(op) not in WRITES or not isinstance(self, torch.Tensor) or self.dim() == 0 or args.get("accumulate"):
        return expected, 0
    ids = torch.arange(self.numel()).view(self.shape)
    if base(op) in ("aten::index_copy", "aten::index_copy_"):
        dest, values = ids.index_select(args["dim"] % self.dim(), args["index"].reshape(-1)), args["source"]
    elif base(op) in ("aten::scatter", "aten::scatter_"):
        if "reduce" in args and args["reduce"] is not None:
            return expected, 0
        dest = ids.gather(args["dim"] % self.dim(), args["index"])
        src = args.get("src", args.get("value"))
        values = (src[tuple(slice(0, n) for n in dest.shape)] if isinstance(src, torch.Tensor)
                  else torch.full(dest.shape, src, dtype=self.dtype))
    elif base(op) in ("aten::put", "aten::put_"):
        dest = args["index"].reshape(-1) % self.numel()
        values = args["source"].reshape(-1)
    else:
        dest = ids[tuple(args["indices"])]
        values = args["values"].expand_as(dest)
    dest, values = dest.reshape(-1), values.reshape(-1).to(device.dtype)
    flat = device.reshape(-1)
    writes = torch.zeros(flat.numel(), dtype=torch.long).index_add_(0, dest, torch.ones_like(dest))
    same = (flat[dest] == values) | (torch.isnan(flat[dest]) & torch.isnan(values)) if values.is_floating_point() \
        else flat[dest] == values
    hits = torch.zeros(flat.numel(), dtype=torch.long).index_add_(0, dest, same.long())
    take = (writes >= 2) & (hits > 0)
    return torch.where(take, flat.to(expected.dtype), expected.reshape(-1)).view(expected.shape), int(take.sum())


def take_ties(expected, device, place):
    """An index output takes the device's index where it points at an element equal to the one the cpu's does."""
    op, args = resolved()
    self = args.get("self")
    tie = TIES.get(op) or TIES.get(base(op))
    if tie is None or tie[0] != place or args.get("stable") or not isinstance(self, torch.Tensor) \
            or self.dim() == 0 or expected.dtype != torch.long or device.shape != expected.shape:
        return expected, 0
    flat = op in ("aten::argmax", "aten::argmin") and args.get("dim") is None
    dim = 0 if flat else args.get("dim", -1) % self.dim()
    if device.numel() == 0 or int(device.min()) < 0 or int(device.max()) >= (self.numel() if flat else self.shape[dim]):
        return expected, 0

    def at(i):
        if flat:
            return self.reshape(-1)[i]
        reduced = tie[1] and not args.get("keepdim", False)
        v = self.gather(dim, i.unsqueeze(dim) if reduced else i)
        return v.squeeze(dim) if reduced else v

    a, b = at(device), at(expected)
    take = ((a == b) | (torch.isnan(a) & torch.isnan(b))) & (device != expected)
    return torch.where(take, device, expected), int(take.sum())
