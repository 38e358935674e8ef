def rms_norm_reference(input, normalized_shape, weight=None, eps=None):
    """x / sqrt(mean(x², trailing dims) + eps) · weight as opcheck decomposes rms_norm (float32 for fp16/bf16)."""
    dims = [input.dim() - 1 - i for i in range(len(normalized_shape))]
    e = eps if eps is not None else torch.finfo(input.dtype).eps
    x = input.to(torch.float32) if input.dtype in LOW_PRECISION else input
    out = (x * torch.rsqrt(x.pow(2).mean(dims, keepdim=True) + e)).to(input.dtype)
    return out * weight if weight is not None else out


