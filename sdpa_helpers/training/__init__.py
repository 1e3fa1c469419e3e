"""Notebook 09's topic: a tiny attention model trained in numpy, with the scale and without.

:mod:`.task` (the retrieval task and a run's data), :mod:`.model` (forward and backward pass), :mod:`.trainer`
(many runs at once), :mod:`.grid` (the stored grid the notebook reads), :mod:`.summaries` (results over seeds),
:mod:`.adam` (the stored Adam grid), :mod:`.evidence` (the course's evidence table). Their public names are
importable from here.
"""

from . import adam, evidence, grid, model, summaries, task, trainer
from .adam import *  # noqa: F403
from .evidence import *  # noqa: F403
from .grid import *  # noqa: F403
from .model import *  # noqa: F403
from .summaries import *  # noqa: F403
from .task import *  # noqa: F403
from .trainer import *  # noqa: F403

__all__ = [*task.__all__, *model.__all__, *trainer.__all__, *grid.__all__, *summaries.__all__, *adam.__all__,
           *evidence.__all__]
