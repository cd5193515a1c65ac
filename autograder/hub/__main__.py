"""``python -m autograder.hub -f hub/jupyterhub_config.py``: the course's hub, as the
``jupyterhub`` command starts it, without jsonschema's IRI grammar (``autograder/__init__.py``:
1.6 s of CPU at every start, and no schema of JupyterHub's uses the format).
``make hub`` and the tests start it so; the students' servers too (``spawner.SINGLEUSER``)."""
import sys

from jupyterhub.app import main

sys.exit(main())
