"""Helpers for the course "Why sqrt(d_k)?": the math, the figures and the explorers.

Layers (imports go one way, down this list):

- the math, numpy only: :mod:`sdpa_helpers.theory`, :mod:`sdpa_helpers.sampling`,
  :mod:`sdpa_helpers.attention`, :mod:`sdpa_helpers.scales` (the one vocabulary for the
  scale), :mod:`sdpa_helpers.verify`, and one module per topic (``overview``, ``variance``,
  ``small_samples``, ``scaling``, ``saturation``, ``assumptions``, ``training``,
  ``models``);
- :mod:`sdpa_helpers.plots` -- matplotlib figures from arrays (``ax=None`` in, Axes/Figure out);
- :mod:`sdpa_helpers.widgets` -- interactive explorers built from the two layers above;
- :mod:`sdpa_helpers.exercises` -- self-checked exercises (uses the math layer).

Importing the package loads only the math layer and changes no global state.
ARCHITECTURE.md (at the repository's root) describes the layers and the public API.
"""

from . import attention, sampling, theory
from .sampling import make_rng

__version__ = "1.0.0"

__all__ = ["attention", "sampling", "theory", "make_rng", "__version__"]
