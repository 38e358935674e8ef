"""The accumulation bound's runs of a traced call (docs/judgement.md, docs/modules.md): for a call that a rule of
accumulation_rules (src/judge/backend_freedoms_table.cpp, which the C++ side hands over in the request) applies to,
the call run once more in float64 on ones (with the argument the rule counts its terms with changed), on the squares
and on the absolute values of its floating inputs. The C++ judge (src/exec/module_case.cpp, src/exec/accumulation.cpp)
makes the bound from them, as it does for an op case."""


def _holds(named, condition):
    """A rule's condition on the call's arguments, as the C++ judge reads it (src/exec/backend_freedoms.cpp):
    None (always), "accumulate" (a bool argument that is true) or "reduce=mean" (a string argument that is this
    value, or None)."""
    if condition is None:
        return True
    name, eq, value = condition.partition("=")
    if not eq:
        return named.get(name) is True
    return named.get(name) is None or named.get(name) == value


def _named(func, saved):
    args, kwargs = saved
    return dict(zip([a.name for a in func._schema.arguments], args), **kwargs)


def rule_of(func, saved, request):
    """The place in the request's accumulation rules ([op, condition, counted with]) of the first that applies to the
    traced call, or None."""
    op = func.name().split(".")[0]
    named = None
    for k, (rule_op, condition, _) in enumerate(request.get("accumulation_rules", ())):
        if rule_op != op:
            continue
        named = named if named is not None else _named(func, saved)
        if _holds(named, condition):
            return k
    return None


def _with_argument(func, saved, spec):
    """The call's arguments with `spec` ("reduce=sum", "scale_grad_by_freq=False") set, by its schema name."""
    if spec is None:
        return saved
    name, _, text = spec.partition("=")
    value = {"True": True, "False": False}.get(text, text)
    args, kwargs = list(saved[0]), dict(saved[1])
    names = [a.name for a in func._schema.arguments]
    if name in names[:len(args)]:
        args[names.index(name)] = value
    else:
        kwargs[name] = value
    return tuple(args), kwargs


def _changed(x, how):
    import torch
    if not isinstance(x, torch.Tensor) or not x.is_floating_point():
        return x
    if how == "ones":
        return torch.ones_like(x, dtype=torch.float64)
    wide = x.detach().to(torch.float64, copy=True)
    return wide.square_() if how == "squares" else wide.abs_()


def runs(func, saved, outputs, request):
    """For a call an accumulation rule of the request applies to: (the rule's place, the count of the first floating
    input's elements, [the call's `outputs` tensor leaves on ones (with the argument the rule counts with), then on
    squares, then on absolute values]); None where no rule applies, an input is complex, none is floating, or a run
    fails or gives another number of leaves."""
    import torch
    from torch.utils import _pytree as pytree
    rule = rule_of(func, saved, request)
    if rule is None:
        return None
    counted = request["accumulation_rules"][rule][2]
    leaves = [x for x in pytree.tree_leaves(saved) if isinstance(x, torch.Tensor)]
    floating = [x for x in leaves if x.is_floating_point()]
    if not floating or any(x.is_complex() for x in leaves):
        return None
    out = []
    for how in ("ones", "squares", "magnitudes"):
        args, kwargs = pytree.tree_map(lambda x: _changed(x, how), _with_argument(func, saved, counted)
                                       if how == "ones" else saved)
        try:
            with torch.no_grad():
                got = [t.detach() for t in pytree.tree_leaves(func(*args, **kwargs)) if isinstance(t, torch.Tensor)]
        except Exception:  # noqa: BLE001 - the float64 judge then decides as for any op
            return None
        if len(got) != outputs:
            return None
        out += got
    return rule, floating[0].numel(), out
