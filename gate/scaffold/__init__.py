"""`gate init`: a starting rules repository for a team that adopts gate.

Owns the repository template (files/), the first revision derived from the
newest shipped one (revision.py) and writing the tree (repository.py).
Rank 4: imports gate.language (to load and name the new revision), nothing
higher; the command line lives in gate/cli/init.py.
"""

from gate.scaffold.repository import InitResult, init_repository

__all__ = ["InitResult", "init_repository"]
