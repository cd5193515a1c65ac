"""What every student's server on the course hub reads (the hub puts this folder on
``JUPYTER_CONFIG_PATH``): which course, where its exchange is, and who the student is.

nbgrader takes a student's name from the OS user, but on ``make hub`` every server runs as
the hub's own OS user; the name the hub logged them in with (``JUPYTERHUB_USER``, set by the
hub, not by the student) is the one their submissions and feedback go under.
"""
import os

c = get_config()  # noqa: F821  (injected by nbgrader)

c.CourseDirectory.course_id = os.environ["MINITORCH_COURSE_ID"]
c.Exchange.root = os.environ["MINITORCH_EXCHANGE"]
c.CourseDirectory.student_id = os.environ["JUPYTERHUB_USER"]
