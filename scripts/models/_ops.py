"""Ops the shipped model definitions call that older torch releases lack, under the names newer torch gives them.

`scaled_dot_product_attention` is torch.nn.functional.scaled_dot_product_attention where torch has it (2.0+).
On a torch without it, it is a Python function that torch function modes see as that same op (so the scanner records
`torch.nn.functional.scaled_dot_product_attention`, as real manifests spell it) and that computes the math
reference when it runs.
"""
import math

import torch
import torch.nn.functional as F
from torch.overrides import handle_torch_function, has_torch_function


def _sdpa_math(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
    if dropout_p != 0.0:
        raise ValueError("the shipped models run attention without dropout")
    if enable_gqa and query.size(-3) != key.size(-3):
        key = key.repeat_interleave(query.size(-3) // key.size(-3), -3)
        value = value.repeat_interleave(query.size(-3) // value.size(-3), -3)
    s = 1.0 / math.sqrt(query.size(-1)) if scale is None else scale
    scores = torch.matmul(query, key.transpose(-2, -1)) * s
    L, S = query.size(-2), key.size(-2)
    if is_causal:
        keep = torch.ones(L, S, dtype=torch.bool, device=query.device).tril()
        scores = scores.masked_fill(~keep, float("-inf"))
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            scores = scores.masked_fill(~attn_mask, float("-inf"))
        else:
            scores = scores + attn_mask
    return torch.matmul(torch.softmax(scores.float(), dim=-1).to(query.dtype), value)


def _sdpa_dispatching(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                      enable_gqa=False):
    if has_torch_function((query, key, value)):
        return handle_torch_function(_sdpa_dispatching, (query, key, value), query, key, value, attn_mask=attn_mask,
                                     dropout_p=dropout_p, is_causal=is_causal, scale=scale, enable_gqa=enable_gqa)
    return _sdpa_math(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)


# Seen by torch function modes (and the scanner) under the name torch gives the real op.
_sdpa_dispatching.__module__ = "torch.nn.functional"
_sdpa_dispatching.__name__ = _sdpa_dispatching.__qualname__ = "scaled_dot_product_attention"

scaled_dot_product_attention = getattr(F, "scaled_dot_product_attention", _sdpa_dispatching)
