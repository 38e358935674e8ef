KWARG_LOW_DTYPE = @KWARG_LOW_DTYPE@


def moved(x, device):
    """A copy of x on `device` with the same sizes, strides and storage offset."""
    if x.numel() == 0:
        return torch.empty_strided(x.shape, x.stride(), dtype=x.dtype, device=device)
    extent = x.storage_offset() + 1 + sum((n - 1) * st for n, st in zip(x.shape, x.stride()))
    base = torch.empty(extent, dtype=x.dtype, device=device)
    base.copy_(x.as_strided((extent,), (1,), 0))
    return base.as_strided(x.shape, x.stride(), x.storage_offset())


def to_host(v):
    if isinstance(v, torch.Tensor):
        return v.cpu()
    if isinstance(v, (list, tuple)):
        return [to_host(x) for x in v] if isinstance(v, list) else tuple(to_host(x) for x in v)
    return v


def cast_back(v, want, fallback, compute):
    """A wider result in the dtypes the op gives (`want`: a run on the meta device), else in `fallback`."""
    if isinstance(v, torch.Tensor):
        if isinstance(want, torch.Tensor):
            return v if v.dtype == want.dtype else v.to(want.dtype)
        return v.to(fallback) if fallback is not None and v.dtype == compute else v
    if isinstance(v, (list, tuple)):
        wants = want if isinstance(want, (list, tuple)) and len(want) == len(v) else [None] * len(v)
        items = [cast_back(x, w, fallback, compute) for x, w in zip(v, wants)]
        return items if isinstance(v, list) else tuple(items)
    return v


def wider(x, compute):
    """x in the dtype a run in `compute` gives it: narrower floating (complex) tensors widened, others copied."""
    if x.is_floating_point() and x.dtype != compute and torch.finfo(x.dtype).bits <= torch.finfo(compute).bits:
        return x.to(compute)
    if x.is_complex() and compute == torch.float64 and x.dtype != torch.complex128:
        return x.to(torch.complex128)
    return moved(x, "cpu")


def computed_in(host, compute, override=None):
    """The cpu result and the arguments after the call, with floating inputs in `compute` (not cast back); with
    `override` (name, value), the op's argument of that name so."""
    global UPCAST
    UPCAST = compute
    args = [wider(x, compute) for x in host]
    try:
        with Dispatched(wide=True, override=override):
            return call(args, "cpu"), args
    finally:
        UPCAST = None


def reference(host):
    """The cpu result and the tensor arguments after the call, as opcheck's reference computes them: in the case's
    dtypes; where a cpu kernel lacks float16/bfloat16, in float32; where the cpu refuses the call's precision
    (mixed dtypes, a conversion or a dtype its kernels lack), in float64; results cast back to the dtypes the op
    gives."""
    global REFUSED, GOLDEN
    CALLED.clear()
    args = [moved(x, "cpu") for x in host]
    try:
        with Dispatched():
            return call(args, "cpu"), args
    except RuntimeError as e:
        first_error = e
    gap = re.search(r"not implemented for '(Half|BFloat16|ComplexHalf)'", str(first_error))
    compute = torch.float32 if gap else torch.float64
    CALLED.clear()
    try:
        out, args = computed_in(host, compute)
    except Exception:  # noqa: BLE001 - opcheck reports the first error then
        raise first_error
    if not gap:
        REFUSED = str(first_error).splitlines()[0]
        GOLDEN = (out, args)
    try:
        native = call([torch.empty_strided(x.shape, x.stride(), dtype=x.dtype, device="meta") for x in host], "meta")
    except Exception:  # noqa: BLE001 - no meta kernel: the inputs' low-precision dtype
        native = None
    low = [x.dtype for x in host if x.is_floating_point() and x.dtype != compute]
    fallback = low[0] if low else KWARG_LOW_DTYPE
    for d in low[1:]:
        fallback = torch.promote_types(fallback, d)
    print(f"reference (cpu): computed in {compute}, cast back "
          f"({'the cpu kernel lacks the dtype' if gap else 'the cpu refused: ' + REFUSED})")
    return cast_back(out, native, fallback, compute), [a.to(x.dtype) for a, x in zip(args, host)]


def on_device(host, device):
    """The device result and the tensor arguments after the call, moved to the host."""
    args = [moved(x, "cpu" if on_host else device) for x, on_host in zip(host, HOST_INPUTS)]
    if COMPILE_BACKEND is None:
        return to_host(call(args, device)), to_host(args)

    class OpCall(torch.nn.Module):
        """The op call as a module, compiled as opcheck --compile-backend compiles it."""

        def forward(self, *t):
            return call(list(t), device)

    torch._dynamo.reset()
    with torch.no_grad():
        out = torch.compile(OpCall(), backend=COMPILE_BACKEND)(*args)
    return to_host(out), to_host(args)


def tolerances(dtype):
    defaults = {torch.float16: (1e-3, 1e-5), torch.bfloat16: (1.6e-2, 1e-5), torch.float32: (1.3e-6, 1e-5),
                torch.float64: (1e-7, 1e-7), torch.complex32: (1e-3, 1e-5), torch.complex64: (1.3e-6, 1e-5),
                torch.complex128: (1e-7, 1e-7)}
    rtol, atol = defaults.get(dtype, (0.0, 0.0))
    return (rtol if RTOL is None else RTOL), (atol if ATOL is None else ATOL)


def raw(x):
    x = x.contiguous().reshape(-1)
    return torch.view_as_real(x).reshape(-1).view(torch.uint8) if x.is_complex() else x.view(torch.uint8)


def dense(x):
    """A sparse tensor's values as a dense tensor (bundles keep sparse outputs so); anything else as it is."""
    return x.to_dense() if isinstance(x, torch.Tensor) and x.layout != torch.strided else x


def same_bits(a, b):
    a, b = dense(a), dense(b)
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.dtype == b.dtype
                and a.shape == b.shape and torch.equal(raw(a), raw(b)))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same_bits(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def plain(v):
    """Named tuples (torch.return_types) as tuples: torch.load reads those back with its default weights_only."""
    if isinstance(v, (list, tuple)):
        items = [plain(x) for x in v]
        return items if isinstance(v, list) else tuple(items)
    return v


def compare(expected, actual, path="output", golden=None, allowance=None):
    """Prints how the device's `actual` compares with the cpu's `expected`, leaf by leaf; True when they agree
    under the case's comparator (integer and bool tensors always exactly), with opcheck's judgement: the float64
    judge when `golden` (the float64 result) is given, widened by the accumulation bound `allowance` (a leaf in units
    of the unit roundoff, and whether the op sums in float32 at least) for an op that accumulates, backend freedoms,
    and undefined results."""
    if isinstance(expected, (list, tuple)):
        if not isinstance(actual, (list, tuple)) or len(actual) != len(expected):
            print(f"{path}: the cpu gives {len(expected)} items, the device {type(actual).__name__}")
            return False
        goldens = golden if isinstance(golden, (list, tuple)) and len(golden) == len(expected) else [None] * len(expected)
        bound, in32 = allowance if allowance is not None else (None, False)
        bounds = [(b, in32) for b in bound] if isinstance(bound, list) and len(bound) == len(expected) \
            else [None] * len(expected)
        return all([compare(e, a, f"{path}[{i}]", g, b)
                    for i, (e, a, g, b) in enumerate(zip(expected, actual, goldens, bounds))])
    if not isinstance(expected, torch.Tensor):
        ok = same_bits(expected, actual) or expected == actual
        print(f"{path}: cpu {expected!r}, device {actual!r}")
        return ok
    if isinstance(actual, torch.Tensor) and actual.layout != expected.layout:
        print(f"{path}: layout mismatch: the cpu gives {expected.layout}, the device {actual.layout}")
        return False
    if expected.layout != torch.strided:  # a sparse output: judged by its values, however it stores them
        expected, actual, golden = dense(expected), dense(actual), dense(golden)
    op = resolved()[0]
    if (isinstance(actual, torch.Tensor) and actual.dtype == torch.float32 and expected.dtype in LOW_PRECISION
            and path in [f"output[{k}]" for k in WIDENED_OUTPUTS.get(base(op), ())]):
        print(f"{path}: {actual.dtype} where the cpu gives {expected.dtype}, compared by value (a backend freedom)")
        actual = actual.to(expected.dtype)
    if isinstance(actual, torch.Tensor) and actual.shape == expected.shape and actual.dtype == expected.dtype:
        taken = 0
        if path == "output" or path.startswith("input tensor"):
            expected, taken = take_writers(expected, actual)
        place = 0 if path == "output" else int(path[7:-1]) if path.startswith("output[") else None
        if not taken and place is not None:
            expected, taken = take_ties(expected, actual, place)
        if taken:
            print(f"{path}: {taken} position(s) take the device's choice where PyTorch leaves it undefined")
    if not isinstance(actual, torch.Tensor) or actual.dtype != expected.dtype or actual.shape != expected.shape:
        what = f"{actual.dtype} {list(actual.shape)}" if isinstance(actual, torch.Tensor) else type(actual).__name__
        print(f"{path}: the cpu gives {expected.dtype} {list(expected.shape)}, the device {what}")
        return False
    if expected.numel() == 0:
        print(f"{path}: empty {expected.dtype} {list(expected.shape)} on both")
        return True
    bitwise, float64_judge = COMPARATORS[COMPARE]
    if bitwise or not (expected.is_floating_point() or expected.is_complex()):
        ok = torch.equal(raw(expected), raw(actual))
        print(f"{path}: {expected.dtype} {list(expected.shape)} {'bitwise equal' if ok else 'differs'}")
        return ok
    e, a = expected, actual
    if e.is_complex():
        e, a = torch.view_as_real(e), torch.view_as_real(a)
    e, a = e.double(), a.double()
    rtol, atol = tolerances(expected.dtype)
    close = torch.isclose(a, e, rtol=rtol, atol=atol, equal_nan=EQUAL_NAN)
    if isinstance(golden, torch.Tensor) and golden.shape == expected.shape and float64_judge:
        g = torch.view_as_real(golden) if golden.is_complex() else golden
        bound, in32 = allowance if allowance is not None else (None, False)
        per_element = None
        if isinstance(bound, torch.Tensor) and bound.shape == expected.shape and not expected.is_complex():
            per_element = bound.double() * accumulation_unit(expected.dtype, in32)
        close, rescued, further, only_bound = judged(e, a, g.double(), rtol, atol, expected.dtype, close, per_element)
        if rescued:
            print(f"{path}: the float64 judge passed {rescued} element(s) outside the tolerance of the cpu reference; "
                  f"the cpu reference was the further from float64 at {further} of them" +
                  (f"; {only_bound} of them only within the accumulation bound of a sum of their terms in any order"
                   if only_bound else ""))
    diff = torch.where(a == e, torch.zeros_like(a), (a - e).abs())
    diff = torch.where(torch.isnan(a) & torch.isnan(e), torch.zeros_like(a), diff)
    rel = diff / e.abs()
    rel = torch.where(diff == 0, torch.zeros_like(rel), rel)
    mismatched = int((~close).sum())
    print(f"{path}: {expected.dtype} {list(expected.shape)}: {mismatched} / {close.numel()} mismatched "
          f"(rtol {rtol}, atol {atol}), max_abs_diff {float(diff.max())!r}, max_rel_diff {float(rel.max())!r}")
    return VERDICTS[COMPARE](e, a, mismatched, path)


def judge(host, expected, actual, cpu_args, device_args):
    """The output and every argument the op wrote against the cpu's; where the tolerance alone fails, again with
    the float64 result (the float64 judge), as opcheck does."""
    def all_agree(golden, golden_args, bound=None):
        agree = compare(expected, actual, "output", golden, None if bound is None else (bound[0], bound[2]))
        # Arguments the op writes in place differ between the runs when the device wrote them differently.
        for k, (e, a) in enumerate(zip(cpu_args, device_args)):
            if not same_bits(e, a):
                g = golden_args[k] if golden_args is not None else None
                b = None if bound is None or k >= len(bound[1]) else (bound[1][k], bound[2])
                agree = compare(e, a, f"input tensor {k} after the call", g, b) and agree
        return agree

    if all_agree(None, None) or not COMPARATORS[COMPARE][1]:
        return True
    print("the tolerance alone is not met: the float64 judge decides (see docs/judgement.md)")
    if GOLDEN is None:
        try:
            golden = computed_in(host, torch.float64)
        except Exception as e:  # noqa: BLE001 - the tolerance alone then decides, as in opcheck
            print(f"the float64 judge was not applied: the cpu could not compute the call in float64 ({e})")
            return False
    else:
        golden = GOLDEN
    if all_agree(golden[0], golden[1]):
        return True
    bound = accumulation_bound(host, golden)  # an op that sums terms: the bound of a sum in any order decides
    if bound is None:
        return False
    print("the float64 judge alone is not met: the accumulation bound of each element's terms decides")
    return all_agree(golden[0], golden[1], bound)


def attempt(what, fn):
    try:
        return fn(), None
    except Exception as e:  # noqa: BLE001 - every error class is reported
        print(f"{what} raised {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
        return (None, None), e


def not_registered(device, fix):
    """Says in one line that `device` is not registered in this Python and what to set; the exit status 3."""
    print(f"repro: device '{device.split(':')[0]}' is not registered in this Python ({sys.executable}, torch "
          f"{torch.__version__}): {fix}", file=sys.stderr)
    return 3


def unregistered_fix(kind):
    """What registers a device no module of the script did: torch's autoload of an installed backend, or an import."""
    if os.environ.get("TORCH_DEVICE_BACKEND_AUTOLOAD", "1") != "1":
        autoload = "unset TORCH_DEVICE_BACKEND_AUTOLOAD (it keeps torch from loading installed backends)"
    else:
        autoload = "leave TORCH_DEVICE_BACKEND_AUTOLOAD unset"
    return (f"install the backend that registers '{kind}' (a torch.backends entry point), or set PYTHONPATH to the "
            f"folder that holds it, and {autoload}; or write the script with the module that registers it: "
            f"opcheck repro ... --python --device-import MODULE --device {kind}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=DEVICE, help=f"device under test (default {DEVICE})")
    parser.add_argument("--device-lib", default=DEVICE_LIB, help="PrivateUse1 backend library to load first")
    parser.add_argument("--out", help="folder to torch.save the cpu output (cpu.pt) and the device output (device.pt)")
    args = parser.parse_args()
    if args.device_lib:
        torch.ops.load_library(args.device_lib)
        # torch imports a Python module for the PrivateUse1 backend (torch.<its name>) when a tensor first moves to
        # it; a backend registered from C++ alone has none, so an empty one stands in.
        name = torch._C._get_privateuse1_backend_name()
        if not hasattr(torch, name):
            torch._register_device_module(name, types.ModuleType(f"torch.{name}"))
    if DEVICE_IMPORTS and PYTHON_PATH:
        sys.path.insert(0, PYTHON_PATH)
    for spec in DEVICE_IMPORTS:
        module, _, function = spec.partition(":")  # MODULE:FUNCTION calls the function after the import
        try:
            imported = importlib.import_module(module)
        except ModuleNotFoundError as e:
            where = f"PYTHONPATH={':'.join(DEVICE_PATHS)} (the run's)" if DEVICE_PATHS else "PYTHONPATH"
            return not_registered(args.device, f"cannot import {module} ({e}): set {where} to the folder that "
                                               f"holds it, or install it in {sys.executable}")
        if function:
            getattr(imported, function)()
    kind = args.device.split(":")[0]
    if kind not in ("cpu", "cuda", "xpu", "mps", "meta", "privateuseone") and \
            kind != torch._C._get_privateuse1_backend_name():
        return not_registered(args.device, unregistered_fix(kind))

    host = inputs()
    (expected, cpu_args), cpu_error = attempt("reference (cpu)", lambda: reference(host))
    (actual, device_args), device_error = attempt(f"device ({args.device})", lambda: on_device(host, args.device))
    if REFUSED is not None and device_error is not None and not EXPECTED_ERROR:
        print(f"device ({args.device}) refuses the call as the cpu does ({REFUSED}): not supported")
    status = 0
    if EXPECTED_ERROR:
        kind, match = EXPECTED_ERROR
        for name, err in (("reference (cpu)", cpu_error), (f"device ({args.device})", device_error)):
            ok = err is not None and re.search(match, str(err)) is not None
            print(f"{name}: {'raised' if ok else 'did not raise'} the expected {kind} matching {match!r}")
            status = status if ok else 1
    elif cpu_error is not None or device_error is not None:
        status = 1
    else:
        agree = judge(host, expected, actual, cpu_args, device_args)
        print(f"device ({args.device}) {'agrees with' if agree else 'DIFFERS from'} the cpu reference")
        status = 0 if agree else 1

    if BUNDLE:
        def written(after):
            return None if after is None else [after[k] for k in WRITTEN]

        for name, got, error in (("reference.pt", expected, cpu_error), ("device.pt", actual, device_error),
                                 ("reference_written.pt", written(cpu_args), cpu_error),
                                 ("device_written.pt", written(device_args), device_error)):
            path = os.path.join(BUNDLE, name)
            if error is not None or not os.path.exists(path):
                continue
            same = same_bits(got, torch.load(path, weights_only=True))
            print(f"{name}: {'reproduced bit for bit' if same else 'NOT reproduced'} by this run's "
                  f"{'reference (cpu)' if name.startswith('reference') else f'device ({args.device})'}")
            status = status if same else 2
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        for name, got, error, after in (("cpu", expected, cpu_error, cpu_args),
                                        ("device", actual, device_error, device_args)):
            if error is None:
                torch.save(plain(got), os.path.join(args.out, f"{name}.pt"))
                torch.save(plain(after), os.path.join(args.out, f"{name}_inputs_after.pt"))
    return status


if __name__ == "__main__":
    sys.exit(main())
