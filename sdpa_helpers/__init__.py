"""Helpers for the course "Why sqrt(d_k)?": the math (numpy only; importing the package loads only
this layer and changes no global state), the figures (:mod:`.plots`), the explorers (:mod:`.widgets`)
and the exercises (:mod:`.exercises`). ARCHITECTURE.md describes the layers and the public API.
"""

from . import attention, sampling, theory
from .sampling import make_rng

__version__ = "1.0.0"

__all__ = ["attention", "sampling", "theory", "make_rng", "__version__"]
