"""What real models do: published attention configurations (:data:`MODELS`) and methods against logit growth
(:data:`TECHNIQUES`), each with a source a learner can follow (paper section, or file and commit of the
reference code, read on 2026-11-23). ``head_dim = d_model / n_heads`` is common, not a rule: see
:func:`counter_examples`.
"""

from __future__ import annotations

import math
from typing import NamedTuple

__all__ = ["ModelConfig", "Technique", "MODELS", "TECHNIQUES", "model", "counter_examples", "format_table"]


class ModelConfig(NamedTuple):
    """One published attention configuration: ``d_model`` (width of the tokens), ``n_heads`` (query heads),
    ``head_dim`` (length of each query and key: the ``d_k`` of the scale), ``scale`` (the factor on ``q . k``;
    1.0 for T5), ``scale_label`` (the same in words), ``notes``, ``source``."""

    name: str
    d_model: int
    n_heads: int
    head_dim: int
    scale: float
    scale_label: str
    notes: str
    source: str

    @property
    def d_model_over_h(self) -> float:
        """``d_model / n_heads`` -- the common choice of ``head_dim``."""
        return self.d_model / self.n_heads

    @property
    def head_dim_is_d_model_over_h(self) -> bool:
        """Whether ``head_dim * n_heads == d_model`` for this model."""
        return self.head_dim * self.n_heads == self.d_model

    @property
    def sqrt_scale_ratio(self) -> float:
        """``scale * sqrt(head_dim)``: 1 for the paper's 1/sqrt(d_k), otherwise how far from it."""
        return self.scale * math.sqrt(self.head_dim)


class Technique(NamedTuple):
    """A method that keeps attention logits in range, with where it is used and its source."""

    name: str
    what: str
    used_by: str
    source: str


_T5_PAPER = ("Raffel et al. 2020, 'Exploring the Limits of Transfer Learning with a Unified "
             "Text-to-Text Transformer', JMLR 21(140), §3.1 and §3.7 (arXiv:1910.10683, p. 36)")
_T5_CODE = ("tensorflow/mesh mesh_tensorflow/transformer/attention.py (commit da90793), "
            "AttentionParams.init_weights, lines 436-439: W_Q stddev = d_model**-0.5 * d_kv**-0.5 when "
            "fold_scaling_into_initializer (default True, line 363); attention() line 77: logits = q.k, unscaled")
_T5_HF = ("huggingface/transformers models/t5/modeling_t5.py, T5PreTrainedModel._init_weights: "
          "q.weight std = factor * ((d_model * key_value_proj_dim) ** -0.5), k and v: factor * d_model ** -0.5; "
          "trained with AdaFactor (paper §3.1.2)")
_T5_NOTE = "1/√d_kv folded into W_Q's init"
_T5_SRC = _T5_PAPER + "; " + _T5_CODE + "; " + _T5_HF
_GEMMA_CODE = "google-deepmind/gemma gemma/gm/nn/_gemma.py (commit 7691fd4)"
_GEMMA2_SRC = (_GEMMA_CODE + ", class {cls}: query_pre_attn_norm={norm}, attn_logits_soft_cap=50.0; "
               "_config.py query_pre_attn_scalar(); _modules.py: query * scalar, then 50 tanh(logits/50); "
               "Gemma Team 2024, 'Gemma 2' (arXiv:2408.00118)")

#: The published configurations (see each row's ``source``).
MODELS: tuple[ModelConfig, ...] = (
    ModelConfig("Transformer base (2017)", 512, 8, 64, 64**-0.5, "1/√64",
                "d_k = d_v = d_model/h = 64",
                "Vaswani et al. 2017, 'Attention Is All You Need', §3.2.1-3.2.2 and Table 3 (arXiv:1706.03762)"),
    ModelConfig("BERT-base", 768, 12, 64, 64**-0.5, "1/√64",
                "init truncated normal, stddev 0.02; mask adds -10000",
                "Devlin et al. 2019, §3 (BERT_BASE: L=12, H=768, A=12; arXiv:1810.04805); google-research/bert "
                "modeling.py: attention_scores * 1.0 / math.sqrt(float(size_per_head)); create_initializer("
                "initializer_range=0.02) = tf.truncated_normal_initializer(stddev=initializer_range) (TF cuts at "
                "2 stddev, so the weights' own std is about 0.88 * 0.02)"),
    ModelConfig("GPT-2 small", 768, 12, 64, 64**-0.5, "1/√64",
                "init N(0, 0.02²); LayerNorm first",
                "openai/gpt-2 src/model.py (commit 122c55a): default_hparams n_embd=768, n_head=12; "
                "conv1d(w_init_stdev=0.02); w = w * tf.rsqrt(v.shape[-1]); mask_attn_weights"),
    ModelConfig("T5 small", 512, 8, 64, 1.0, "none (1)", _T5_NOTE, _T5_SRC),
    ModelConfig("T5 base", 768, 12, 64, 1.0, "none (1)", _T5_NOTE, _T5_SRC),
    ModelConfig("T5 large", 1024, 16, 64, 1.0, "none (1)", _T5_NOTE, _T5_SRC),
    ModelConfig("T5 3B", 1024, 32, 128, 1.0, "none (1)",
                _T5_NOTE + "; 32·128 ≠ 1024", _T5_SRC),
    ModelConfig("T5 11B", 1024, 128, 128, 1.0, "none (1)",
                _T5_NOTE + "; 128·128 ≠ 1024", _T5_SRC),
    ModelConfig("Llama 2 7B", 4096, 32, 128, 128**-0.5, "1/√128",
                "RMSNorm, not LayerNorm",
                "Touvron et al. 2023, LLaMA Table 2 (7B: dimension 4096, 32 heads; arXiv:2302.13971) and "
                "Llama 2 §2.2 (same architecture; arXiv:2307.09288); meta-llama/llama llama/model.py: "
                "head_dim = dim // n_heads, scores / math.sqrt(head_dim), RMSNorm"),
    ModelConfig("Gemma 7B", 3072, 16, 256, 256**-0.5, "1/√256",
                "16·256 ≠ 3072",
                "Gemma Team 2024, Table 1 (arXiv:2403.08295); google-deepmind/gemma gemma/transformer.py "
                "(commit c8fe239) TransformerConfig.gemma_7b: embed_dim=3072, num_heads=16, head_dim=256"),
    ModelConfig("Gemma 2 2B", 2304, 8, 256, 256**-0.5, "1/√256",
                "8·256 ≠ 2304; soft-cap 50",
                _GEMMA2_SRC.format(cls="Gemma2_2B", norm="BY_ONE_OVER_SQRT_HEAD_DIM")),
    ModelConfig("Gemma 2 9B", 3584, 16, 256, 256**-0.5, "1/√256",
                "16·256 ≠ 3584; soft-cap 50; first ports used 1/√224",
                _GEMMA2_SRC.format(cls="Gemma2_9B", norm="BY_ONE_OVER_SQRT_HEAD_DIM")
                + "; the first public ports set query_pre_attn_scalar=224 (= d_model/h), corrected to 256 in "
                "July 2024: google/gemma_pytorch commit 03e6575, huggingface/transformers issue #31891 and the "
                "google/gemma-2-9b config.json on the Hugging Face Hub"),
    ModelConfig("Gemma 2 27B", 4608, 32, 128, 144**-0.5, "1/√144",
                "scale from d_model/h, not head_dim; soft-cap 50",
                _GEMMA2_SRC.format(cls="Gemma2_27B", norm="BY_ONE_OVER_SQRT_EMBED_DIM_DIV_NUM_HEADS")),
    ModelConfig("Gemma 3 27B", 5376, 32, 128, 168**-0.5, "1/√168",
                "QK-norm instead of soft-cap",
                _GEMMA_CODE + ", class Gemma3_27B: use_qk_norm=True, attn_logits_soft_cap=None, "
                "query_pre_attn_norm=BY_ONE_OVER_SQRT_EMBED_DIM_DIV_NUM_HEADS; Gemma Team 2025, "
                "'Gemma 3 Technical Report' (arXiv:2503.19786)"),
)

#: Methods against logit growth, with sources.
TECHNIQUES: tuple[Technique, ...] = (
    Technique("soft-capping", "logits s -> c tanh(s / c): every logit stays in (-c, c)",
              "Gemma 2 (c = 50)",
              _GEMMA_CODE.replace("_gemma.py", "_modules.py") + " lines 254-256; Gemma 2 report (arXiv:2408.00118)"),
    Technique("QK-norm", "normalise q and k (LayerNorm/RMSNorm or to unit length) before the dot product, "
              "so logits are bounded by the norms' learned gains",
              "ViT-22B, OLMo 2, Gemma 3",
              "Henry et al. 2020 (arXiv:2010.04245); Dehghani et al. 2023, ViT-22B §2 (arXiv:2302.05442); "
              "Team OLMo 2024, '2 OLMo 2 Furious' (arXiv:2501.00656) and huggingface/transformers "
              "models/olmo2/modular_olmo2.py, Olmo2Attention: q_norm, k_norm = Olmo2RMSNorm over all heads' q and k; "
              + _GEMMA_CODE + " use_qk_norm=True (Gemma 3)"),
    Technique("muP 1/d attention", "scale q.k by 1/d instead of 1/sqrt(d), and initialise W_Q to zero; the "
              "reference code uses 8/d, equal to 1/sqrt(d) at d = 64",
              "muP (Tensor Programs V), mutransformers",
              "Yang et al. 2022, Tensor Programs V (arXiv:2203.03466); microsoft/mup README.md (commit 1981497) "
              "lines 72-76 ('attention_scores = query @ key.T * 8 / d') and 227-229 ('initializing the query "
              "matrix in a Transformer to 0')"),
)


def model(name: str) -> ModelConfig:
    """The row of :data:`MODELS` called ``name``."""
    for row in MODELS:
        if row.name == name:
            return row
    raise ValueError(f"name must be one of {', '.join(repr(r.name) for r in MODELS)}; got {name!r}")


def counter_examples() -> tuple[ModelConfig, ...]:
    """The rows whose ``head_dim`` is not ``d_model / n_heads``."""
    return tuple(r for r in MODELS if not r.head_dim_is_d_model_over_h)


def format_table(rows=None) -> str:
    """A plain-text table of ``rows`` (default :data:`MODELS`): sizes, scale, notes."""
    rows = MODELS if rows is None else tuple(rows)
    for r in rows:
        if not isinstance(r, ModelConfig):
            raise TypeError(f"rows must hold ModelConfig rows, got {type(r).__name__}")
    head = f"{'model':<24}{'d_model':>7}{'heads':>6}{'head_dim':>9}{'d_model/h':>10}  {'scale':<10}notes"
    lines = [head, "-" * len(head)]
    for r in rows:
        dh = f"{r.d_model_over_h:g}"
        lines.append(f"{r.name:<24}{r.d_model:>7}{r.n_heads:>6}{r.head_dim:>9}{dh:>10}  {r.scale_label:<10}{r.notes}")
    return "\n".join(lines)
