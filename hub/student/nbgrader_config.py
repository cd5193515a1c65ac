"""What every student's server on the course hub reads (its sandbox shows this folder at
``/srv/minitorch/config``, on ``JUPYTER_CONFIG_PATH``): which course, where its exchange is
inside the sandbox, and who the student is.

The sandbox runs the server as the student's own Unix account, which its ``/etc/passwd``
names after them, so nbgrader's own guess and ``JUPYTERHUB_USER`` (set by the hub, not by the
student) agree; what the student can submit as is decided by the sandbox and the collector,
not by this name.
"""
import os

c = get_config()  # noqa: F821  (injected by nbgrader)

c.CourseDirectory.course_id = os.environ["MINITORCH_COURSE_ID"]
c.Exchange.root = os.environ["MINITORCH_EXCHANGE"]
c.CourseDirectory.student_id = os.environ["JUPYTERHUB_USER"]
