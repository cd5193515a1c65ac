"""nbgrader configuration: the repository root is the course directory."""
import os
import sys

from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
from nbgrader.preprocessors import ClearHiddenTests, GetGrades

c = get_config()  # noqa: F821  (injected by nbgrader)

ROOT = os.path.dirname(os.path.abspath(__file__))

c.CourseDirectory.root = ROOT
c.CourseDirectory.source_directory = "source"
c.CourseDirectory.release_directory = "release"

# Hand-in through Canvas or Moodle: put the bulk download in downloaded/<unit>/archive/ and run
# `nbgrader zip_collect <unit>`; autograder.pipeline.term.lms reads both LMSs' file names (lms.py),
# and unpacks the download within limits (extract.py: no path outside, no link, modes masked).
c.ZipCollectApp.collector_plugin = "autograder.pipeline.term.lms.lms.LmsFileNames"
c.ZipCollectApp.extractor_plugin = "autograder.pipeline.term.lms.extract.LmsExtractor"
# c.LmsFileNames.roster = "students.csv"   # lms_name,lms_id,student_id: two Moodle "Jane Doe"s
c.ZipCollectApp.strict = True   # a notebook that is not the unit's is skipped, and listed
# Every CSV the course writes (grades.csv here, grades-lms.csv, downloaded/lms-students.csv)
# is inert in a spreadsheet: no cell starts a formula (autograder/pipeline/csv_cells.py).
c.ExportApp.plugin_class = "autograder.pipeline.term.grades_csv.InertCsvExport"

# Autograding kernels start in autograded/<student>/<assignment>/, where the
# course packages are not importable unless the root is on the path.
os.environ["PYTHONPATH"] = os.pathsep.join(
    [ROOT] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
)
sys.path.insert(0, ROOT)

# The course's matrices are small: with two OpenBLAS threads on a busy 2-core grading
# machine, products got 10-35x slower and training cells hit the cell timeout.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

# (the imports below need the path above)
from autograder.pipeline.job.outputs import ScrubHiddenTracebacks  # noqa: E402
from autograder.pipeline.term import unsandboxed  # noqa: E402
from autograder.pipeline.term.exchange import exchange  # noqa: E402
from autograder.pipeline.term.feedback_page import DescribeImages, FeedbackExporter  # noqa: E402
from autograder.pipeline.term.inert import MakeInert  # noqa: E402

# The exchange (release_assignment, fetch, submit, collect, release/fetch_feedback): a shared
# folder named by MINITORCH_EXCHANGE on a hub, else <course>-exchange beside the course (never in
# it, where the instructor's server would serve what students put there), made on first use
# with the modes nbgrader needs (autograder/pipeline/term/exchange/exchange.py).
c.CourseDirectory.course_id = exchange.course_id()
c.Exchange.root = str(exchange.root(ROOT))
# Collect (the command and Formgrader's button) refuses what a student could forge: another
# student's name or account, a time in the future, links, devices, unsafe names
# (autograder/pipeline/term/exchange/).
c.ExchangeFactory.collect = "autograder.pipeline.term.exchange.collect.SafeCollect"
# On the course hub each student hands in through a folder of their own (students/<id>/):
# collect takes the student from that folder, feedback goes back into it (autograder/hub/exchange.py).
if os.path.isdir(os.path.join(c.Exchange.root, c.CourseDirectory.course_id, "students")):
    c.ExchangeFactory.collect = "autograder.hub.exchange.StudentCollect"
    c.ExchangeFactory.release_feedback = "autograder.hub.exchange.StudentReleaseFeedback"

# Formgrader's Autograde button would grade inside the instructor's Jupyter server, unsandboxed:
# there it refuses and names our grader (autograder/pipeline/term/unsandboxed.py).
if unsandboxed.in_jupyter_server():
    c.Autograde.exporter_class = unsandboxed.RefusedExporter

# Release (the command and Formgrader's button) refuses a unit whose provided cells carry the
# solutions of a unit still open in schedule.toml (autograder/pipeline/term/exchange/release.py).
c.ExchangeFactory.release_assignment = (
    "autograder.pipeline.term.exchange.release.ScheduledReleaseAssignment")

# A solution cell that never returns must not stall grading.
c.Execute.timeout = 30
# A student who deletes a test cell still gets it graded (and scored 0 if failing).
c.OverwriteCells.add_missing_cells = True
# Feedback shows which checks failed, never the hidden test code: a hidden test cell's
# traceback becomes its message alone, then the hidden test lines are removed. What the
# student wrote or printed runs no script in the page (autograder/pipeline/term/inert.py).
# Each picture gets its description before the page is rendered, which is then written as
# rendered, not parsed and written again (autograder/pipeline/term/feedback_page.py).
c.GenerateFeedback.preprocessors = [GetGrades, ScrubHiddenTracebacks, ClearHiddenTests,
                                    MakeInert, DescribeImages, CSSHTMLHeaderPreprocessor]
c.GenerateFeedback.exporter_class = FeedbackExporter
