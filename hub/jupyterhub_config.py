"""The course's JupyterHub (``make hub``): one instructor and a class on one Linux server.

Every student's server runs in a sandbox of its own (``autograder/hub/``): their own Unix
account, PID, IPC and network namespaces (the proxy reaches the server on a Unix socket; the
server reaches a few of the hub's API routes through ``autograder/hub/relay.py``), no
capabilities, the student environment (no reference, no autograder), their home on a disk image
of its own, the exchange, and nothing else; held to
``MINITORCH_HUB_LIMITS`` by control groups; killed, with all it started, when it stops or idles.
Each person logs in with their own password (``<state>/logins.csv``, 0600). The instructor's
server runs in the same sandbox as an account of its own that owns the course
(``autograder/hub/instructor.py``), in the course directory, with Formgrader. docs/deploying.md
("The course's JupyterHub") says what this hub guarantees and what a production hub adds.

Runs as root on Linux with cgroup v1 and bubblewrap: root makes the accounts, the sandboxes,
the control groups and the home images, and hands the course to the instructor's account.
Environment (all optional):
    MINITORCH_HUB_INSTRUCTOR_PASSWORD  the instructor's password, if not the one made up
                              into logins.csv: 12+ characters that zxcvbn rates 4 of 4
    MINITORCH_HUB_INSTRUCTOR  the instructor's name (default ``instructor``)
    MINITORCH_HUB_ROSTER      the class list, a CSV with a ``student`` column (default
                              ``hub/roster.csv``); without one, MINITORCH_HUB_STUDENTS
    MINITORCH_HUB_STUDENTS    comma-separated student names (default ``alice,bob,carol``)
    MINITORCH_HUB_LIMITS      per student, e.g. ``memory=2G,processes=256,cpus=1,disk=2G,inbound=256M``
    MINITORCH_HUB_CULL_IDLE   seconds before an idle server is stopped (default 3600)
    MINITORCH_HUB_PORT        the port users open (default 8000); the hub's own API takes
                              the next port and the proxy's API the one after
    MINITORCH_HUB_IP          the address the hub listens on (default 127.0.0.1; 0.0.0.0:
                              every interface)
    MINITORCH_HUB_URL         the address users open (default http://localhost:<port>, or
                              https:// with a certificate); each user's server is on its own
                              origin, <user>.<host> (``autograder/hub/origins.py``)
    MINITORCH_HUB_SUBDOMAINS  ``off``: every user on the hub's one origin (for a name without
                              a wildcard DNS entry; an IP address is always off)
    MINITORCH_HUB_SSL_CERT, MINITORCH_HUB_SSL_KEY   serve HTTPS with this certificate (it must
                              name the host and each user's, e.g. *.hub.example.edu)
    MINITORCH_HUB_STATE       the hub's secrets, database and homes (default ``hub/state``)
    MINITORCH_HUB_STUDENT_ENV the student environment (default ``build/hub/student-env``,
                              which ``make hub`` builds from the student bundle)
    MINITORCH_HUB_ACCOUNT_PREFIX  students' Unix account names (default ``jupyter-``)
    MINITORCH_COURSE          the course directory (default: this repository)
    MINITORCH_EXCHANGE, MINITORCH_COURSE_ID   as in ``nbgrader_config.py``
"""
import ipaddress
import os
import socket
import sys
from pathlib import Path

# The hub's code comes from its installed package (``make`` installs this checkout), never
# from the course folder, where the instructor's account may add files.
from autograder.hub import accounts, instructor, logins, origins, roster, state
from autograder.hub import exchange as student_exchange
from autograder.hub.spawner import SandboxSpawner
from autograder.hub.sandbox import CONFIG
from autograder.pipeline.sandbox import cgroups, limits
from autograder.pipeline.term.exchange import exchange

HUB = Path(__file__).resolve().parent

c = get_config()  # noqa: F821  (injected by JupyterHub)
env = os.environ.get

COURSE = Path(env("MINITORCH_COURSE") or HUB.parent).resolve()
STATE = Path(env("MINITORCH_HUB_STATE") or HUB / "state").resolve()
INSTRUCTOR = env("MINITORCH_HUB_INSTRUCTOR") or "instructor"
ROSTER = Path(env("MINITORCH_HUB_ROSTER") or HUB / "roster.csv")
PORT = int(env("MINITORCH_HUB_PORT") or 8000)
STUDENT_ENV = Path(env("MINITORCH_HUB_STUDENT_ENV") or HUB.parent / "build/hub/student-env")
BIN = Path(sys.executable).parent
PROXY = HUB / "node_modules" / ".bin" / "configurable-http-proxy"


def _refuse(message: str) -> None:
    print(f"make hub: {message}", file=sys.stderr)
    raise SystemExit(2)


def _free(port: int, ip: str = "127.0.0.1") -> bool:
    with socket.socket(socket.AF_INET6 if ":" in ip else socket.AF_INET) as probe:
        # As the servers will: a closed connection's TIME_WAIT does not hold the port.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((ip, port))
        except OSError:
            return False
    return True


def _students() -> list[str]:
    try:
        if env("MINITORCH_HUB_ROSTER") or ROSTER.exists():
            return roster.read(ROSTER)
        names = (env("MINITORCH_HUB_STUDENTS") or "alice,bob,carol").split(",")
        return roster.checked([(0, n.strip()) for n in names if n.strip()], "MINITORCH_HUB_STUDENTS")
    except (OSError, roster.RosterError) as why:
        _refuse(str(why))


def _listen_address() -> str:
    """Where the hub listens (MINITORCH_HUB_IP): loopback unless the instructor opens it wider."""
    ip = env("MINITORCH_HUB_IP") or "127.0.0.1"
    try:
        ipaddress.ip_address(ip)
    except ValueError:
        _refuse(f"MINITORCH_HUB_IP={ip!r} is not an IP address (127.0.0.1, or 0.0.0.0 for all)")
    return ip


def _origins() -> origins.Origins:
    """Where users open the hub, each on an origin of their own where the name allows it."""
    try:
        return origins.plan(env(origins.URL_VARIABLE), env(origins.SUBDOMAINS_VARIABLE), PORT,
                            bool(env("MINITORCH_HUB_SSL_CERT")))
    except ValueError as why:
        _refuse(str(why))


def _limits() -> limits.Limits:
    try:
        return limits.parse(env(limits.VARIABLE))
    except ValueError as why:
        _refuse(str(why))


def _checks(students: list[str]) -> None:
    """Refuse, saying why, a hub that could not run or could not keep students apart."""
    if os.geteuid() != 0 or not sys.platform.startswith("linux"):
        _refuse("the hub makes an account and a sandbox per student: run it as root on Linux")
    if not (COURSE / "nbgrader_config.py").is_file():
        _refuse(f"{COURSE} is not a course directory (no nbgrader_config.py); set MINITORCH_COURSE")
    if INSTRUCTOR in students:
        _refuse(f"{INSTRUCTOR!r} is both the instructor and a student")
    if env("MINITORCH_HUB_PASSWORD"):
        _refuse("MINITORCH_HUB_PASSWORD is no longer used: each student has their own password, "
                f"in {STATE / 'logins.csv'} (readable by root only); unset it")
    chosen = env("MINITORCH_HUB_INSTRUCTOR_PASSWORD")
    weak = chosen is not None and logins.weakness(chosen, INSTRUCTOR)
    if weak:
        _refuse(f"MINITORCH_HUB_INSTRUCTOR_PASSWORD is too weak: {weak}")
    for port, ip in ((PORT, IP), (PORT + 1, "127.0.0.1"), (PORT + 2, "127.0.0.1")):
        if not _free(port, ip):
            _refuse(f"port {port} on {ip} is taken (the hub uses {PORT}-{PORT + 2}); "
                    "stop what holds it or set MINITORCH_HUB_PORT")
    if not PROXY.exists():
        _refuse(f"{PROXY} is missing: `make hub` installs it (npm ci in hub/)")
    if not (STUDENT_ENV / "bin" / "jupyterhub-singleuser").exists():
        _refuse(f"no student environment in {STUDENT_ENV}: `make hub` builds it "
                "(python -m autograder.hub.student_env)")
    missing = cgroups.unavailable()
    if missing:
        _refuse(f"per-student limits cannot be enforced: {missing}")


STUDENTS = _students()
LIMITS = _limits()
IP = _listen_address()
_checks(STUDENTS)

SECRETS = state.private_folder(state.private_folder(STATE) / "hub")
LOGINS = STATE / "logins.csv"
made = logins.ensure(LOGINS, STUDENTS, INSTRUCTOR, env("MINITORCH_HUB_INSTRUCTOR_PASSWORD"))
if made:
    print(f"make hub: new passwords for {', '.join(made)} are in {LOGINS} (root only)",
          file=sys.stderr)

c.JupyterHub.ip = IP
c.JupyterHub.port = PORT
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = PORT + 1
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{PORT + 2}"
c.ConfigurableHTTPProxy.command = [str(PROXY)]
c.ConfigurableHTTPProxy.auth_token = state.secret(SECRETS / "proxy_token")
c.ConfigurableHTTPProxy.pid_file = str(SECRETS / "proxy.pid")
c.JupyterHub.db_url = f"sqlite:///{state.private_file(SECRETS / 'jupyterhub.sqlite')}"
c.JupyterHub.cookie_secret_file = str(SECRETS / "cookie_secret")
c.JupyterHub.tornado_settings = {"cookie_options": {"samesite": "Lax"}}
CERT, KEY = env("MINITORCH_HUB_SSL_CERT"), env("MINITORCH_HUB_SSL_KEY")
if bool(CERT) != bool(KEY):
    _refuse("MINITORCH_HUB_SSL_CERT and MINITORCH_HUB_SSL_KEY go together: set both or neither")
if CERT:    # HTTPS, and every cookie of the hub's and the servers' Secure
    c.JupyterHub.ssl_cert, c.JupyterHub.ssl_key = CERT, KEY
    c.JupyterHub.tornado_settings["cookie_options"]["secure"] = True

# Each user's server on an origin of its own (autograder/hub/origins.py), so that a page one
# user's server serves can act neither in another's nor in the hub. Over HTTPS (here or at a
# proxy in front), the login cookies' names start with __Host-: no user's host can set one.
ORIGINS = _origins()
if ORIGINS.subdomains:
    c.JupyterHub.subdomain_host = ORIGINS.url
    c.JupyterHub.cookie_host_prefix_enabled = ORIGINS.url.startswith("https:")
    print(f"make hub: open {ORIGINS.url}; each user's server is on a host of its own, e.g. "
          f"{ORIGINS.server(INSTRUCTOR)}", file=sys.stderr)
else:
    print(f"make hub: every user's server shares the origin of {ORIGINS.url}: a page one user's "
          "server serves acts with the session of whoever opens it (use a host name with "
          f"subdomains: {origins.SUBDOMAINS_VARIABLE} and {origins.URL_VARIABLE})", file=sys.stderr)

# Each person's own password (logins.csv); the instructor alone is the hub's admin.
c.JupyterHub.authenticator_class = logins.CourseAuthenticator
c.CourseAuthenticator.logins_file = str(LOGINS)
c.Authenticator.allowed_users = set(STUDENTS)
c.Authenticator.admin_users = {INSTRUCTOR}

# The instructor's account owns the course and the exchange's folders it writes
# (autograder/hub/instructor.py, autograder/hub/exchange.py); root keeps the code.
ACCOUNT_PREFIX = env("MINITORCH_HUB_ACCOUNT_PREFIX") or "jupyter-"
try:
    TEACHER = accounts.ensure(ACCOUNT_PREFIX, INSTRUCTOR, accounts.INSTRUCTOR)
except accounts.AccountError as why:
    _refuse(str(why))
EXCHANGE = exchange.root(COURSE)
instructor.hand_over(COURSE, exchange.course_id(), TEACHER)
student_exchange.course_folders(EXCHANGE, exchange.course_id(), TEACHER, STUDENTS)
# Each student's inbound is an image of its own, mounted while the hub runs (collect reads it
# with her server stopped): after a reboot, the ones made before are mounted again here.
student_exchange.remount_inbounds(EXCHANGE, exchange.course_id(), STATE / "disks")
COURSE_ENV = {"MINITORCH_COURSE_ID": exchange.course_id(), "MINITORCH_EXCHANGE": str(EXCHANGE)}

c.JupyterHub.spawner_class = SandboxSpawner
c.SandboxSpawner.instructor = INSTRUCTOR
c.SandboxSpawner.course = str(COURSE)
c.SandboxSpawner.code = str(HUB.parent)
c.SandboxSpawner.instructor_environment = str(BIN.parent)
c.SandboxSpawner.instructor_config = str(HUB / "instructor")
c.SandboxSpawner.state = str(STATE)
c.SandboxSpawner.student_environment = str(STUDENT_ENV)
c.SandboxSpawner.student_config = str(HUB / "student")
c.SandboxSpawner.account_prefix = ACCOUNT_PREFIX
c.SandboxSpawner.cgroup_parent = f"minitorch-hub-{PORT}"
c.SandboxSpawner.limits = LIMITS
c.SandboxSpawner.exchange_root = str(EXCHANGE)
c.SandboxSpawner.course_id = exchange.course_id()
c.Spawner.env_keep = ["LANG", "LC_ALL"]
c.Spawner.default_url = "/lab"


def _per_user(spawner) -> None:
    """The instructor opens the course with its configuration and ``hub/instructor/``, whose
    server configuration sends a script policy with every page
    (``autograder/pipeline/term/csp.py``) and has kernels speak over Unix sockets, as
    ``make lab`` does; a student their home, with the exchange where their sandbox shows it.
    (Formgrader runs ``alembic``, found on the PATH the spawner gives: the venv's bin.)"""
    if spawner.user.name == INSTRUCTOR:
        spawner.environment = dict(COURSE_ENV, JUPYTER_CONFIG_PATH=os.pathsep.join(
            [str(COURSE), CONFIG]))
    else:
        spawner.environment = dict(COURSE_ENV, MINITORCH_EXCHANGE=student_exchange.INSIDE)


c.Spawner.pre_spawn_hook = _per_user

# Idle servers are stopped (and, being sandboxes, all they started): jupyterhub-idle-culler.
CULL_IDLE = int(env("MINITORCH_HUB_CULL_IDLE") or 3600)
c.JupyterHub.services = [{"name": "idle-culler", "command": [
    sys.executable, "-P", "-m", "autograder.hub.culler", f"--timeout={CULL_IDLE}",
    f"--cull-every={max(5, min(300, CULL_IDLE // 2))}"]}]
c.JupyterHub.load_roles = [{"name": "idle-culler", "services": ["idle-culler"], "scopes": [
    "list:users", "read:users:activity", "read:servers", "delete:servers"]}]
