"""Tensor bytes and the .safetensors format, written and read by hand (8-byte little-endian header size, the JSON
header padded with spaces to 8 bytes as safetensors pads it, then the tensors' bytes), so no test needs the
safetensors package. Used by the end-to-end tests and by test/exec_inputs/test_python_parity.py."""
import json

import torch

SAFETENSORS_DTYPES = {"F16": torch.float16, "BF16": torch.bfloat16, "F32": torch.float32, "F64": torch.float64,
                      "I64": torch.int64, "I32": torch.int32, "I16": torch.int16, "I8": torch.int8, "U8": torch.uint8,
                      "BOOL": torch.bool}


def raw(t):
    """A tensor's elements in row-major order as bytes (a complex element as its real and imaginary parts)."""
    t = t.contiguous().reshape(-1)
    if t.numel() == 0:
        return b""
    if t.is_complex():
        t = torch.view_as_real(t).reshape(-1)
    return t.view(torch.uint8).numpy().tobytes()


def write_safetensors(path, tensors):
    """Writes the {name: tensor} dict `tensors` to `path` as a .safetensors file."""
    names = {v: k for k, v in SAFETENSORS_DTYPES.items()}
    header, blobs, at = {}, [], 0
    for name, t in tensors.items():
        data = raw(t)
        header[name] = {"dtype": names[t.dtype], "shape": list(t.shape), "data_offsets": [at, at + len(data)]}
        blobs.append(data)
        at += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(len(text).to_bytes(8, "little") + text + b"".join(blobs))


def read_safetensors(path):
    """The {name: tensor} dict of a .safetensors file."""
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(n))
        body = f.read()
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        begin, end = e["data_offsets"]
        data = bytearray(body[begin:end])
        out[name] = torch.frombuffer(data, dtype=SAFETENSORS_DTYPES[e["dtype"]]).reshape(e["shape"]).clone()
    return out
