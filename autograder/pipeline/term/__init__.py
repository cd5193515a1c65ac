"""What a term needs around grading: nbgrader's exchange (``exchange``: release under the
schedule, collect believing nothing a student controls), hand-ins and grades through an LMS
(``lms``), feedback in parallel, each page rendered once (``feedback``, ``feedback_page``), the
class report (``report``), the student bundle and its guide (``bundle``, ``student_guide``), and
the instructor's pages kept free of student scripts (``inert``, ``csp``, ``unsandboxed``), its
server serving a student's files as data and Formgrader reflecting no markup (``as_data``,
``reflection``), and the solution cells that copy provided code or each other, by their
fingerprints (``copies``, ``fingerprints``; the ledger flags them, the report shows them,
``similar``). It may
import the job (nbgrader's runner, output filters), the pipeline's shared modules and
``autograder.notebooks``, never the ledger, which imports ``inert`` from here."""
