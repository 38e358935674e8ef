"""The accumulation bound's runs of a traced call (docs/judgement.md, docs/modules.md): for a call of an op that sums
terms into each element (accumulation_rules in src/common/backend_freedoms_table.cpp, whose ops the C++ side hands
over in the request), the call run once more in float64 on ones, on the squares and on the absolute values of its
floating inputs. The C++ judge (src/exec/module_case.cpp, src/exec/accumulation.cpp) makes the bound from them, as
it does for an op case."""


def accumulates(func, request):
    """Whether `func` (a traced call's op) is one of the ops the request names as accumulating (without overload)."""
    return func.name().split(".")[0] in request.get("accumulating_ops", ())


def _changed(x, how):
    import torch
    if not isinstance(x, torch.Tensor) or not x.is_floating_point():
        return x
    if how == "ones":
        return torch.ones_like(x, dtype=torch.float64)
    wide = x.detach().to(torch.float64, copy=True)
    return wide.square_() if how == "squares" else wide.abs_()


def runs(func, saved, outputs):
    """(the count of the first floating input's elements, [the call's `outputs` tensor leaves on ones, then on
    squares, then on absolute values]), or None where an input is complex, none is floating, or a run fails or gives
    another number of leaves."""
    import torch
    from torch.utils import _pytree as pytree
    leaves = [x for x in pytree.tree_leaves(saved) if isinstance(x, torch.Tensor)]
    floating = [x for x in leaves if x.is_floating_point()]
    if not floating or any(x.is_complex() for x in leaves):
        return None
    out = []
    for how in ("ones", "squares", "magnitudes"):
        args, kwargs = pytree.tree_map(lambda x: _changed(x, how), saved)
        try:
            with torch.no_grad():
                got = [t.detach() for t in pytree.tree_leaves(func(*args, **kwargs)) if isinstance(t, torch.Tensor)]
        except Exception:  # noqa: BLE001 - the float64 judge then decides as for any op
            return None
        if len(got) != outputs:
            return None
        out += got
    return floating[0].numel(), out
