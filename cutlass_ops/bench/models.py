"""The linear layers of public model configs, as GEMM shapes.

Each config lists the projections a transformer block runs through ``F.linear`` (the weight
W stored (out, in), so the product is ``x @ W.t()``: A row-major, B column-major, "rc"), with
N = out features and K = in features. Training adds two products per projection: the input's
gradient ``grad_out @ W`` ("rr": M = tokens, N = in, K = out) and the weight's
``grad_out.t() @ x`` ("cr": M = out, N = in, K = tokens).

Sizes are the published configs (Hugging Face ``config.json``: hidden_size,
num_attention_heads, num_key_value_heads, head_dim, intermediate_size).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ModelConfig:
    name: str
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int

    def projections(self) -> list[tuple[str, int, int]]:
        """(name, N, K) of each distinct linear layer: fused QKV, attention output, MLP up, MLP down."""
        q = self.heads * self.head_dim
        layers = [
            ("qkv", q + 2 * self.kv_heads * self.head_dim, self.hidden),
            ("o", self.hidden, q),
            ("up", self.intermediate, self.hidden),
            ("down", self.hidden, self.intermediate),
        ]
        seen, out = set(), []
        for name, n, k in layers:
            if (n, k) not in seen:
                seen.add((n, k))
                out.append((name, n, k))
        return out


MODELS = [
    ModelConfig("llama-3-8b", hidden=4096, heads=32, kv_heads=8, head_dim=128, intermediate=14336),
    ModelConfig("llama-3-70b", hidden=8192, heads=64, kv_heads=8, head_dim=128, intermediate=28672),
    ModelConfig("qwen2.5-7b", hidden=3584, heads=28, kv_heads=4, head_dim=128, intermediate=18944),
    ModelConfig("qwen2.5-14b", hidden=5120, heads=40, kv_heads=8, head_dim=128, intermediate=13824),
    ModelConfig("gemma-2-9b", hidden=3584, heads=16, kv_heads=8, head_dim=256, intermediate=14336),
    ModelConfig("phi-3-mini", hidden=3072, heads=32, kv_heads=32, head_dim=96, intermediate=8192),
    ModelConfig("bert-base", hidden=768, heads=12, kv_heads=12, head_dim=64, intermediate=3072),
    ModelConfig("bert-large", hidden=1024, heads=16, kv_heads=16, head_dim=64, intermediate=4096),
    ModelConfig("gpt2-xl", hidden=1600, heads=25, kv_heads=25, head_dim=64, intermediate=6400),
    ModelConfig("vit-h-14", hidden=1280, heads=16, kv_heads=16, head_dim=80, intermediate=5120),
    ModelConfig("falcon-7b", hidden=4544, heads=71, kv_heads=1, head_dim=64, intermediate=18176),
]

MODELS_BY_NAME = {m.name: m for m in MODELS}
