def sdpa_reference(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                   enable_gqa=False):
    """softmax(q·kᵀ·scale + mask)·v as opcheck decomposes scaled_dot_product_attention (dropout off)."""
    assert dropout_p == 0.0, "opcheck runs scaled_dot_product_attention with dropout off"
    k, v = key, value
    if query.dim() >= 3 and k.dim() >= 3 and query.size(-3) != k.size(-3):  # grouped-query heads
        k = k.repeat_interleave(query.size(-3) // k.size(-3), -3)
        v = v.repeat_interleave(query.size(-3) // v.size(-3), -3)
    root = math.sqrt(scale if scale is not None else 1.0 / math.sqrt(query.size(-1)))
    scores = torch.matmul(query * root, k.transpose(-2, -1) * root)
    if is_causal:
        keep = torch.ones(query.size(-2), k.size(-2), dtype=torch.bool, device=query.device).tril()
        scores = scores.masked_fill(keep.logical_not(), -math.inf)
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            scores = scores.masked_fill(attn_mask.logical_not(), -math.inf)
        else:
            scores = scores + attn_mask
    return torch.matmul(torch.softmax(scores, -1), v)


