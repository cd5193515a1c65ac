"""``python -m autograder.hub -f hub/jupyterhub_config.py``: the course's hub, as the
``jupyterhub`` command starts it, without jsonschema's IRI grammar (``autograder/__init__.py``:
1.6 s of CPU at every start, and no schema of JupyterHub's uses the format).
``make hub`` and the tests start it so; the users' servers too (``spawner.SINGLEUSER``).

``python -m`` puts the working folder first on the import path: often the course folder,
where the instructor's account may add files (``autograder.hub.instructor``). The hub (root)
imports nothing from there: only this package came from it."""
import os
import sys

if sys.path and sys.path[0] in ("", os.getcwd()):
    del sys.path[0]

from jupyterhub.app import main  # noqa: E402

sys.exit(main())
