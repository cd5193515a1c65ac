"""Load ``hub/jupyterhub_config.py`` as ``jupyterhub -f`` does, once per environment, in one
process: ``python load_hub_config.py CONFIG < environments.json`` prints, for each environment
(a JSON object of variables), ``{"code": exit code or null, "said": what it wrote}``.

JupyterHub reads its config file with traitlets' ``PyFileConfigLoader``, after importing itself
(about 4 s of computing); a hub that refuses its set-up does so in that file (``_refuse``:
exit code 2 and a message). Loading the file once per environment here gives each refusal's
message for the cost of one import; tests/pipeline/test_hub.py still starts a real second hub
for one refusal, which proves the path from ``jupyterhub`` to the message.
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import sys

from traitlets.config.loader import PyFileConfigLoader


def load(config: str, environment: dict[str, str]) -> dict:
    """What loading ``config`` under ``environment`` exits with and says."""
    os.environ.clear()
    os.environ.update(environment)
    said, code = io.StringIO(), None
    with contextlib.redirect_stderr(said), contextlib.redirect_stdout(said):
        try:
            PyFileConfigLoader(os.path.basename(config), os.path.dirname(config)).load_config()
        except SystemExit as stopped:
            code = stopped.code
    return {"code": code, "said": said.getvalue()}


def main(config: str) -> None:
    json.dump([load(config, environment) for environment in json.load(sys.stdin)], sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
