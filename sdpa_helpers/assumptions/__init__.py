"""Does unit variance hold? The footnote's assumption through a model's life (notebook 08): :mod:`.init` (what
the initialisation gives), :mod:`.networks` (the same by simulation), :mod:`.correlation` (what training does),
:mod:`.qk_norm` (what real models do). Every public name is re-exported here."""

from .correlation import (
    KURTOSIS,
    correlated_dot_product_moments,
    correlated_dot_product_parts,
    correlated_dot_product_parts_exact,
    match_weight,
    sample_correlated_dot_products,
    sample_correlated_qk,
)
from .init import (
    INIT_DISTRIBUTION,
    INIT_LABELS,
    INIT_SHORT_LABELS,
    INITS,
    PROJECTIONS,
    init_logit_moments,
    init_weight_variance,
    projection_fan_out,
    query_variance,
    sample_weights,
)
from .networks import (
    D_MODEL_CHOICES,
    INIT_D_K,
    cluster_mean,
    init_scaled_logits,
    init_scaled_logits_exact,
    sample_projected_logits,
    sample_tokens,
)
from .qk_norm import qk_norm_scores, softcap

__all__ = [
    "INITS", "INIT_LABELS", "INIT_SHORT_LABELS", "INIT_DISTRIBUTION", "PROJECTIONS", "KURTOSIS",
    "init_weight_variance", "sample_weights", "projection_fan_out", "query_variance",
    "init_logit_moments", "sample_tokens", "sample_projected_logits", "cluster_mean",
    "correlated_dot_product_moments", "sample_correlated_qk", "correlated_dot_product_parts",
    "sample_correlated_dot_products", "qk_norm_scores",
    "D_MODEL_CHOICES", "INIT_D_K", "init_scaled_logits", "softcap", "correlated_dot_product_parts_exact",
    "init_scaled_logits_exact", "match_weight",
]
