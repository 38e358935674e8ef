# opcheck import-opinfo: running an OpInfo sample on the CPU, recording the ATen calls it makes, and telling the
# outputs two runs agree on from memory an op left unwritten. `opcheck import-opinfo` carries this file in the binary
# and runs it ahead of import_opinfo.py, in one namespace (docs/opinfo.md).
import math


# ---- running a sample on the CPU ----------------------------------------------------------------------------------

def make_recorder(torch):
    from torch.utils._python_dispatch import TorchDispatchMode

    class Recorder(TorchDispatchMode):
        def __init__(self, record_all=False):
            super().__init__()
            self.ops = []
            self.random = False
            self.calls = 0
            self.first = None  # (op, positional, keywords) of the first call, its tensors copied before it ran
            self.all = [] if record_all else None  # every call so, in order

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            name = str(func.name()) if hasattr(func, "name") else str(func)
            if name not in self.ops:
                self.ops.append(name)
            self.calls += 1
            if self.calls == 1 or self.all is not None:
                call = (func, clone_args(tuple(args), torch), clone_args(dict(kwargs or {}), torch))
                if self.calls == 1:
                    self.first = call
                if self.all is not None:
                    self.all.append(call)
            if torch.Tag.nondeterministic_seeded in getattr(func, "tags", ()):
                self.random = True
            return func(*args, **(kwargs or {}))

    return Recorder


def judgeable(out, torch, depth=0):
    if out is None or isinstance(out, (bool, int, float)):
        return None
    if isinstance(out, torch.Tensor):
        if out.layout not in (torch.strided, torch.sparse_coo, torch.sparse_csr, torch.sparse_csc, torch.sparse_bsr,
                              torch.sparse_bsc):
            return "a %s output" % out.layout
        if out.dtype not in (torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int8, torch.int16,
                             torch.int32, torch.int64, torch.uint8, torch.uint16, torch.uint32, torch.uint64,
                             torch.bool, torch.complex32, torch.complex64, torch.complex128):
            return "a %s output" % out.dtype
        return None
    if isinstance(out, (tuple, list)) and depth < 3:
        for o in out:
            why = judgeable(o, torch, depth + 1)
            if why:
                return why
        return None
    return "a %s output" % type(out).__name__


def same_output(a, b, torch):
    if isinstance(a, torch.Tensor):
        if not isinstance(b, torch.Tensor) or a.shape != b.shape or a.dtype != b.dtype:
            return False
        if a.dtype.is_floating_point or a.dtype.is_complex:
            return bool(torch.equal(torch.nan_to_num(a.detach(), 0.0, 1.0, -1.0),
                                    torch.nan_to_num(b.detach(), 0.0, 1.0, -1.0)) and
                        torch.equal(a.detach().isnan(), b.detach().isnan()))
        return bool(torch.equal(a, b))
    if isinstance(a, (tuple, list)):
        return isinstance(b, (tuple, list)) and len(a) == len(b) and all(same_output(x, y, torch) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def clone_args(v, torch):
    if isinstance(v, torch.Tensor):
        return _strided_copy(v, torch)
    if isinstance(v, tuple):
        return tuple(clone_args(x, torch) for x in v)
    if isinstance(v, list):
        return [clone_args(x, torch) for x in v]
    if isinstance(v, dict):
        return {k: clone_args(x, torch) for k, x in v.items()}
    return v


def _strided_copy(t, torch):
    """The same values in the same sizes, strides and storage offset (as opcheck builds it from the manifest; a dim of
    stride 0, an expanded one, is filled from its first index)."""
    t = t.detach()
    if t.layout != torch.strided:
        return t.clone()  # sparse: no strides to keep (tensor_yaml then says no manifest holds it)
    extent = t.storage_offset() + sum((s - 1) * st for s, st in zip(t.shape, t.stride()) if s > 0) + 1 \
        if t.numel() else t.storage_offset()
    base = torch.zeros(max(extent, 0), dtype=t.dtype)
    out = torch.as_strided(base, t.shape, t.stride(), t.storage_offset())
    dst, src = out, t
    for d, (size, stride) in enumerate(zip(t.shape, t.stride())):
        if stride == 0 and size > 1:
            dst, src = dst.narrow(d, 0, 1), src.narrow(d, 0, 1)
    try:
        dst.copy_(src)
    except RuntimeError:
        # Distinct indices that share memory (other than stride 0), a layout no manifest holds: the values, contiguous.
        return t.clone(memory_format=torch.contiguous_format)
    return out


def run_sample(fn, sample, torch, Recorder, calls=None):
    """(ops reached, random?, output) of one call on copies of the sample's tensors; raises what the op raises.
    `calls`, a dict, receives the number of ATen calls and the first one."""
    inp, args, kwargs = clone_args((sample.input, sample.args, sample.kwargs), torch)
    rec = Recorder()
    with torch.no_grad(), rec:
        out = fn(inp, *args, **kwargs)
    if calls is not None:
        calls.update(count=rec.calls, first=rec.first)
    return rec.ops, rec.random, out


def aten_name(func):
    overload = func._overloadname
    return func._schema.name + ("" if overload == "default" else "." + overload)


class filling_uninitialised:
    """PyTorch's deterministic mode with fill_uninitialized_memory: every tensor the CPU allocates starts as NaN (or
    the largest integer), so an output element no kernel wrote differs from the first run's, whatever the allocator
    hands back (two plain runs may get the same stale bytes). warn_only: no op raises for lacking a deterministic
    variant."""

    def __init__(self, torch):
        self.torch = torch

    def __enter__(self):
        t = self.torch
        self.saved = (t.are_deterministic_algorithms_enabled(), t.is_deterministic_algorithms_warn_only_enabled(),
                      t.utils.deterministic.fill_uninitialized_memory)
        t.use_deterministic_algorithms(True, warn_only=True)
        t.utils.deterministic.fill_uninitialized_memory = True

    def __exit__(self, *exc):
        t = self.torch
        t.use_deterministic_algorithms(self.saved[0], warn_only=self.saved[1])
        t.utils.deterministic.fill_uninitialized_memory = self.saved[2]
        return False


def stable_output(first, run, torch):
    """Whether `first`, an output of run(), holds no memory its op left unwritten: compared with a run with
    uninitialised memory filled (NaN, the largest integer), and with a plain run while both earlier outputs are held
    (so that it gets other memory than the first: a plain run may get back the filled run's NaN, and look written).
    Only a difference at an element one of the runs holds the fill value at counts: an op whose results vary in their
    last bits from run to run (linalg.lstsq's gelsy) writes every element, and the run judges that variation."""
    with filling_uninitialised(torch):
        filled = run()
    scrub(filled, torch)
    second = run()
    return not unwritten_difference(first, filled, torch) and not unwritten_difference(first, second, torch)


def unwritten_difference(a, b, torch):
    """Whether outputs a and b differ at an element where one of them holds what fill_uninitialized_memory writes
    (NaN for floating and complex, the largest value for integers; any difference for bool), or in their structure."""
    if isinstance(a, torch.Tensor):
        if not isinstance(b, torch.Tensor) or a.shape != b.shape or a.dtype != b.dtype:
            return True
        a, b = a.detach(), b.detach()
        if a.dtype == torch.bool:
            return not torch.equal(a, b)
        if a.dtype.is_floating_point or a.dtype.is_complex:
            if a.dtype.is_complex:
                a, b = torch.view_as_real(a.resolve_conj()), torch.view_as_real(b.resolve_conj())
            a, b = a.double(), b.double()  # complex32's real view is float16: isnan and comparisons on its float64 form
            filled = a.isnan() | b.isnan()
            differ = (a != b) & ~(a.isnan() & b.isnan())
        else:
            top = torch.iinfo(a.dtype).max
            filled = (a == top) | (b == top)
            differ = a != b
        return bool((filled & differ).any())
    if isinstance(a, (tuple, list)):
        return (not isinstance(b, (tuple, list)) or len(a) != len(b)
                or any(unwritten_difference(x, y, torch) for x, y in zip(a, b)))
    return not same_output(a, b, torch)


def scrub(out, torch):
    """After a filled run: memory of the sizes its outputs have, written with zeros and freed, so that the next plain
    run's unwritten buffers (the allocator hands back the block freed last) hold zeros, not this run's NaN filling,
    which would make them look written."""
    tensors = [out] if isinstance(out, torch.Tensor) else [t for t in (out if isinstance(out, (tuple, list)) else ())
                                                           if isinstance(t, torch.Tensor)]
    for t in tensors:
        if t.layout == torch.strided and t.numel():
            torch.zeros(t.untyped_storage().nbytes(), dtype=torch.uint8)


def replay(func, args, kwargs, torch):
    a, k = clone_args((args, kwargs), torch)
    with torch.no_grad():
        return func(*a, **k)
