"""Does unit variance hold? The footnote's assumption through a model's life (notebook 08).

The footnote behind ``1/sqrt(d_k)`` assumes the components of ``q`` and ``k`` are independent
with mean 0 and variance 1. The parts of this package follow that assumption:

- :mod:`.init` -- what the initialisation gives: ``Var(W)`` of each scheme, ``Var(q_i)``,
  the moments of ``q . k`` at initialisation;
- :mod:`.networks` -- the same by simulating networks: tokens through LayerNorm, random
  projections, a per-network standard error, cached scaled logits for figures and explorers;
- :mod:`.correlation` -- what training does: ``k = rho q + sqrt(1 - rho^2) z``, mean ``rho d_k``;
- :mod:`.qk_norm` -- what real models do: QK-norm and soft-capping.

Every public name of the parts is re-exported here (``from sdpa_helpers import assumptions as A``).
"""

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
    "D_MODEL_CHOICES", "init_scaled_logits", "softcap", "correlated_dot_product_parts_exact",
    "init_scaled_logits_exact", "match_weight",
]
