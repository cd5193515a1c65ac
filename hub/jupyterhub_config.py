"""The course's JupyterHub (``make hub``): one instructor and a few students on this machine.

A hub to run a term's whole flow where you can see it (on 127.0.0.1), not a production hub:
every user's server runs as this process's OS user (JupyterHub's SimpleLocalProcessSpawner),
with a home of its own under the state folder. Students are told apart by the name they log
in with: their servers read ``hub/student/`` (``JUPYTER_CONFIG_PATH``), which hands that name
to nbgrader and hides Formgrader. The instructor's server opens the course directory, where
Formgrader finds ``nbgrader_config.py``. The README ("Running a term") says what a production
hub sets instead.

Environment (all optional):
    MINITORCH_HUB_PASSWORD    the students' password, 8 characters or more
    MINITORCH_HUB_INSTRUCTOR_PASSWORD   the instructor's, 32 or more (each made up and
                              printed when unset)
    MINITORCH_HUB_INSTRUCTOR  the instructor's name (default ``instructor``)
    MINITORCH_HUB_STUDENTS    comma-separated student names (default ``alice,bob,carol``)
    MINITORCH_HUB_PORT        the port users open (default 8000); the hub's own API takes
                              the next port and the proxy's API the one after
    MINITORCH_HUB_STATE       the hub's database, cookie secret and users' homes
                              (default ``hub/state``, git-ignored)
    MINITORCH_COURSE          the course directory (default: this repository)
    MINITORCH_EXCHANGE, MINITORCH_COURSE_ID   as in ``nbgrader_config.py``
"""
import os
import secrets
import socket
import sys
from pathlib import Path

HUB = Path(__file__).resolve().parent
sys.path.insert(0, str(HUB.parent))

from autograder.pipeline import exchange  # noqa: E402  (needs the path above)

c = get_config()  # noqa: F821  (injected by JupyterHub)

COURSE = Path(os.environ.get("MINITORCH_COURSE") or HUB.parent).resolve()
STATE = Path(os.environ.get("MINITORCH_HUB_STATE") or HUB / "state").resolve()
INSTRUCTOR = os.environ.get("MINITORCH_HUB_INSTRUCTOR") or "instructor"
STUDENTS = [name.strip() for name in (os.environ.get("MINITORCH_HUB_STUDENTS")
                                      or "alice,bob,carol").split(",") if name.strip()]
PORT = int(os.environ.get("MINITORCH_HUB_PORT") or 8000)
BIN = Path(sys.executable).parent
PROXY = HUB / "node_modules" / ".bin" / "configurable-http-proxy"


def _refuse(message: str) -> None:
    print(f"make hub: {message}", file=sys.stderr)
    raise SystemExit(2)


def _free(port: int) -> bool:
    with socket.socket() as probe:
        # As the servers will: a closed connection's TIME_WAIT does not hold the port.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _password(variable: str, who: str, length: int) -> str:
    """``$variable``, at least ``length`` characters; made up and printed when unset."""
    password = os.environ.get(variable)
    if not password:
        password = secrets.token_urlsafe(length)[:length]
        print(f"{variable} is not set; {who}'s password this run: {password}", file=sys.stderr)
    elif len(password) < length:
        _refuse(f"{variable} must be at least {length} characters long, not {len(password)}")
    return password


if not (COURSE / "nbgrader_config.py").is_file():
    _refuse(f"{COURSE} is not a course directory (no nbgrader_config.py); set MINITORCH_COURSE")
if INSTRUCTOR in STUDENTS:
    _refuse(f"{INSTRUCTOR!r} is both the instructor and a student")
for port in (PORT, PORT + 1, PORT + 2):
    if not _free(port):
        _refuse(f"port {port} on 127.0.0.1 is taken (the hub uses {PORT}-{PORT + 2}); "
                "stop what holds it or set MINITORCH_HUB_PORT")
if not PROXY.exists():
    _refuse(f"{PROXY} is missing: `make hub` installs it (npm ci in hub/)")

STUDENT_PASSWORD = _password("MINITORCH_HUB_PASSWORD", "every student", 8)
INSTRUCTOR_PASSWORD = _password("MINITORCH_HUB_INSTRUCTOR_PASSWORD", INSTRUCTOR, 32)
if STUDENT_PASSWORD == INSTRUCTOR_PASSWORD:
    _refuse("the students' and the instructor's passwords must differ")

STATE.mkdir(parents=True, exist_ok=True)
SHARED = {"MINITORCH_COURSE_ID": exchange.course_id(),
          "MINITORCH_EXCHANGE": str(exchange.root(COURSE)),
          # Formgrader runs the `alembic` executable, found only with the venv's bin on PATH.
          "PATH": os.pathsep.join([str(BIN), os.environ.get("PATH", "")])}

c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = PORT
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = PORT + 1
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{PORT + 2}"
c.ConfigurableHTTPProxy.command = [str(PROXY)]
c.ConfigurableHTTPProxy.pid_file = str(STATE / "proxy.pid")
c.JupyterHub.db_url = f"sqlite:///{STATE / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(STATE / "cookie_secret")

# One password for the students, another for the instructor (the hub's admin), who alone sees
# Formgrader and the solutions in source/. (JupyterHub's DummyAuthenticator, with one password
# for everyone, would let any student log in as the instructor.)
c.JupyterHub.authenticator_class = "shared-password"
c.SharedPasswordAuthenticator.user_password = STUDENT_PASSWORD
c.SharedPasswordAuthenticator.admin_password = INSTRUCTOR_PASSWORD
c.Authenticator.allowed_users = set(STUDENTS)
c.Authenticator.admin_users = {INSTRUCTOR}

c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = str(STATE / "home" / "{username}")
c.Spawner.cmd = [str(BIN / "jupyterhub-singleuser")]
c.Spawner.args = ["--allow-root"] if os.geteuid() == 0 else []
c.Spawner.default_url = "/lab"
c.Spawner.environment = SHARED


def _per_user(spawner) -> None:
    """The instructor opens the course; a student opens their home, as themselves.

    Servers start in their user's home, and nbgrader's extensions read ``nbgrader_config.py``
    from there or from ``JUPYTER_CONFIG_PATH``: the instructor's path holds the course's, and
    ``hub/instructor/``, whose server configuration sends a script policy with every page
    (``autograder/pipeline/csp.py``), as ``make lab`` does.
    """
    if spawner.user.name == INSTRUCTOR:
        spawner.notebook_dir = str(COURSE)
        spawner.environment = dict(SHARED, JUPYTER_CONFIG_PATH=os.pathsep.join(
            [str(COURSE), str(HUB / "instructor")]))
    else:
        spawner.notebook_dir = spawner.home_dir
        spawner.environment = dict(SHARED, JUPYTER_CONFIG_PATH=str(HUB / "student"))


c.Spawner.pre_spawn_hook = _per_user
