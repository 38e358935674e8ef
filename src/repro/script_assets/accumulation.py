
# The accumulation bound (docs/judgement.md), as the run computes it (src/exec/accumulation.cpp): for an op that sums
# terms into each element, how far a sum of them in another order may be from float64. The table is opcheck's own
# (accumulation_rules in src/common/backend_freedoms_table.cpp), written here when the script was.
ACCUMULATION = @ACCUMULATION@  # op: (sums in float32 at least, divides each sum by its count)
ACCUMULATION_MULTIPLE = @ACCUMULATION_MULTIPLE@  # lambda of lambda * u * sqrt(E[S_2^2 + ... + S_n^2])


def accumulation_unit(dtype, float32_at_least):
    """The unit roundoff of the precision an op sums an output of `dtype` in."""
    if dtype == torch.float64:
        return 2.0 ** -53
    if float32_at_least:
        return 2.0 ** -24
    units = {torch.float16: 2.0 ** -11, torch.bfloat16: 2.0 ** -8}
    for name, u in (("float8_e4m3fn", 2.0 ** -4), ("float8_e4m3fnuz", 2.0 ** -4), ("float8_e5m2", 2.0 ** -3),
                    ("float8_e5m2fnuz", 2.0 ** -3)):
        if hasattr(torch, name):
            units[getattr(torch, name)] = u
    return units.get(dtype, 2.0 ** -24)


def changed_inputs(host, how):
    """The inputs with every real floating tensor in float64 and made ones, squared or absolute; the others as given."""
    out = []
    for x in host:
        if not x.is_floating_point():
            out.append(x)
        elif how == "ones":
            out.append(torch.ones_like(x, dtype=torch.float64))
        else:
            wide = x.to(torch.float64, copy=True)
            out.append(wide.square_() if how == "squares" else wide.abs_())
    return out


def leaf_bound(total, n, q, m, mean_count):
    """One leaf's bound in units of the unit roundoff: min(lambda sqrt(E[...]), (n - 1) M) from the float64 total T,
    the count n (the call on ones), the sum of squares Q (on squares) and of magnitudes M (on absolute values)."""
    t, n, q, m = total.double(), n.double(), q.double(), m.double()
    if mean_count > 0:  # a mean: its sum has mean_count terms
        n = torch.full_like(t, mean_count)
        t, q, m = t * mean_count, q * mean_count, m * mean_count
    n = n.clamp(min=1.0)
    t2 = t * t
    squares = t2 * (n + 1) * (2 * n + 1) / (6 * n) + (q - t2 / n) * (n + 1) / 6 - q / n
    probable = squares.clamp(min=0.0).sqrt() * ACCUMULATION_MULTIPLE
    bound = torch.minimum(probable, (n - 1) * m.abs())
    bound = torch.where(torch.isfinite(bound), bound, torch.zeros_like(bound))  # an overflowing sum widens nothing
    return bound / mean_count if mean_count > 0 else bound


def bound_of(g, n, q, m, input_numel, mean):
    """Leaf by leaf over the float64 result and the three runs, which have its structure; None where no bound."""
    if all(isinstance(v, torch.Tensor) for v in (g, n, q, m)):
        if not g.is_floating_point() or g.layout != torch.strided or any(v.shape != g.shape for v in (n, q, m)):
            return None
        count = input_numel / g.numel() if mean and g.numel() > 0 else 0
        return leaf_bound(g, n, q, m, count)
    if all(isinstance(v, (list, tuple)) for v in (g, n, q, m)) and len({len(g), len(n), len(q), len(m)}) == 1:
        return [bound_of(*leaves, input_numel, mean) for leaves in zip(g, n, q, m)]
    return None


def accumulation_bound(host, golden):
    """For an op of ACCUMULATION, the bound beside the float64 result `golden` (output, arguments after the call):
    three more float64 runs of the call, on ones, squares and absolute values of its floating inputs. None, with a
    line saying why, when the op has no rule or the runs fail."""
    rule = ACCUMULATION.get(base(resolved()[0]))
    if rule is None:
        return None
    floating = [x for x in host if x.is_floating_point()]
    why = "a complex input" if any(x.is_complex() for x in host) else None if floating else "no floating input"
    runs = []
    for how in ("ones", "squares", "magnitudes"):
        if why is not None:
            break
        try:
            runs.append(computed_in(changed_inputs(host, how), torch.float64))
        except Exception as e:  # noqa: BLE001 - the float64 judge then decides as for any op, as in opcheck
            why = str(e).splitlines()[0] if str(e) else type(e).__name__
    if why is not None:
        print(f"the accumulation bound was not applied ({why}): the float64 judge decides as for any op")
        return None
    (ones, ones_args), (squares, squares_args), (magnitudes, magnitudes_args) = runs
    numel, mean = floating[0].numel(), rule[1]
    out = bound_of(golden[0], ones, squares, magnitudes, numel, mean)
    args = [bound_of(*leaves, numel, mean) for leaves in zip(golden[1], ones_args, squares_args, magnitudes_args)]
    return out, args, rule[0]
