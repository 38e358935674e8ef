
# The accumulation bound (docs/judgement.md), as the run computes it (src/exec/accumulation.cpp): for an op that sums
# terms into each element, how far a sum of them in another order may be from float64. The table is opcheck's own
# (accumulation_rules in src/judge/backend_freedoms_table.cpp), written here when the script was.
# Each rule: (op, its condition on the call's arguments or None, sums in float32 at least, divides each sum by its
# count, the argument its terms are counted with or None, multiplies its terms); the first whose condition holds.
ACCUMULATION = @ACCUMULATION@
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


def leaf_bound(total, n, q, m, mean_count, product):
    """One leaf's bound in units of the unit roundoff: min(lambda sqrt(E[...]), (n - 1) M) from the float64 total T,
    the count n (the call on ones), the sum of squares Q (on squares) and of magnitudes M (on absolute values); for a
    product of n factors, |T| min(lambda sqrt(n - 1), n - 1). `mean_count`: a mean's count of terms (a number, a
    tensor, or None)."""
    t, n, q, m = total.double(), n.double(), q.double(), m.double()
    if product:  # n - 1 roundings, each relative to its partial product
        k = (n - 1).clamp(min=0.0)
        bound = torch.minimum(k.sqrt() * ACCUMULATION_MULTIPLE, k) * t.abs()
        return torch.where(torch.isfinite(bound), bound, torch.zeros_like(bound))
    if isinstance(mean_count, torch.Tensor):
        mean_count = mean_count.double().clamp(min=1.0)
    elif mean_count is not None:
        mean_count = torch.full_like(t, mean_count)
    if mean_count is not None:  # a mean: its sum has mean_count terms
        n = mean_count
        t, q, m = t * mean_count, q * mean_count, m * mean_count
    n = n.clamp(min=1.0)
    t2 = t * t
    squares = t2 * (n + 1) * (2 * n + 1) / (6 * n) + (q - t2 / n) * (n + 1) / 6 - q / n
    probable = squares.clamp(min=0.0).sqrt() * ACCUMULATION_MULTIPLE
    bound = torch.minimum(probable, (n - 1) * m.abs())
    bound = torch.where(torch.isfinite(bound), bound, torch.zeros_like(bound))  # an overflowing sum widens nothing
    return bound / mean_count if mean_count is not None else bound


def bound_of(g, n, q, m, input_numel, rule):
    """Leaf by leaf over the float64 result and the three runs, which have its structure; None where no bound."""
    if all(isinstance(v, torch.Tensor) for v in (g, n, q, m)):
        if not g.is_floating_point() or g.layout != torch.strided or any(v.shape != g.shape for v in (n, q, m)):
            return None
        _, _, _, mean, counted, product = rule
        count = (n if counted else input_numel / g.numel() if g.numel() > 0 else None) if mean else None
        return leaf_bound(g, n, q, m, count, product)
    if all(isinstance(v, (list, tuple)) for v in (g, n, q, m)) and len({len(g), len(n), len(q), len(m)}) == 1:
        return [bound_of(*leaves, input_numel, rule) for leaves in zip(g, n, q, m)]
    return None


def holds(named, condition):
    """A rule's condition, as opcheck reads it: None (always), "accumulate" (a bool argument that is true) or
    "reduce=mean" (a string argument that is this value, or None)."""
    if condition is None:
        return True
    name, eq, value = condition.partition("=")
    return named.get(name) is True if not eq else named.get(name) is None or named.get(name) == value


def counted_with(spec):
    """("reduce", "sum") from "reduce=sum", ("scale_grad_by_freq", False) from "scale_grad_by_freq=False"."""
    if spec is None:
        return None
    name, _, text = spec.partition("=")
    return name, {"True": True, "False": False}.get(text, text)


def accumulation_bound(host, golden):
    """For an op of ACCUMULATION, the bound beside the float64 result `golden` (output, arguments after the call):
    three more float64 runs of the call, on ones, squares and absolute values of its floating inputs. None, with a
    line saying why, when the op has no rule or the runs fail."""
    op, named = resolved()
    rule = next((r for r in ACCUMULATION if r[0] == base(op) and holds(named, r[1])), None)
    if rule is None:
        return None
    floating = [x for x in host if x.is_floating_point()]
    why = "a complex input" if any(x.is_complex() for x in host) else None if floating else "no floating input"
    runs = []
    for how in ("ones", "squares", "magnitudes"):
        if why is not None:
            break
        try:
            override = counted_with(rule[4]) if how == "ones" else None
            runs.append(computed_in(changed_inputs(host, how), torch.float64, override))
        except Exception as e:  # noqa: BLE001 - the float64 judge then decides as for any op, as in opcheck
            why = str(e).splitlines()[0] if str(e) else type(e).__name__
    if why is not None:
        print(f"the accumulation bound was not applied ({why}): the float64 judge decides as for any op")
        return None
    (ones, ones_args), (squares, squares_args), (magnitudes, magnitudes_args) = runs
    numel = floating[0].numel()
    out = bound_of(golden[0], ones, squares, magnitudes, numel, rule)
    args = [bound_of(*leaves, numel, rule) for leaves in zip(golden[1], ones_args, squares_args, magnitudes_args)]
    return out, args, rule[2]
