
def load_tensor_file(path, key=None):
    """The tensor opcheck reads from a .pt, .npy or .safetensors file (key: a dict's entry or a safetensors name)."""
    if path.endswith(".npy"):
        import numpy
        return torch.from_numpy(numpy.load(path)).contiguous()
    if path.endswith(".safetensors"):
        import json
        import struct
        with open(path, "rb") as f:
            n = struct.unpack("<Q", f.read(8))[0]
            header = json.loads(f.read(n))
            entry = header[key if key is not None else next(k for k in header if k != "__metadata__")]
            begin, end = entry["data_offsets"]
            f.seek(8 + n + begin)
            data = bytearray(f.read(end - begin))
        dtype = {"F16": torch.float16, "BF16": torch.bfloat16, "F32": torch.float32, "F64": torch.float64,
                 "I8": torch.int8, "I16": torch.int16, "I32": torch.int32, "I64": torch.int64, "U8": torch.uint8,
                 "BOOL": torch.bool, "C64": torch.complex64}[entry["dtype"]]
        if not data:
            return torch.empty(entry["shape"], dtype=dtype)
        return torch.frombuffer(data, dtype=dtype).reshape(entry["shape"]).clone()
    obj = torch.load(path, weights_only=True)
    if isinstance(obj, dict):
        obj = obj[key]
    return obj.contiguous()

