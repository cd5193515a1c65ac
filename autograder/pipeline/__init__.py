"""The instructor pipeline: grade a class in parallel, give feedback, report, hand out.

``python -m autograder grade|feedback|manual-grades|export|report|bundle|demo`` (see
``autograder/__main__.py``). Its parts, each a folder, bottom first; a module imports only
from its own part and the parts below it (``tests/autograder/test_layers.py`` holds the
order and fails on any import that runs up):

    this folder  what every part shares: the course directory (``course``), the names and
                 claims a student controls (``names``, ``claim``), why a cell has no score
                 (``flags``), the gradebook's two operations (``gradebook``);
    ``sandbox``  the grading kernel and the walls around it (bubblewrap, Landlock, the
                 audit hook, resource bounds, the warm zygote);
    ``job``      one submission graded on a worker: bytes in, a result out;
    ``executor`` where jobs run: Dask, on this machine or a cluster, over TLS;
    ``term``     what a term needs around grading: the exchange, the LMS, feedback, the class
                 report, the student bundle, and pages that run no student script;
    ``ledger``   the only writer of the gradebook and ``autograded/``;
    ``demo``     the whole job on a scratch course with made-up students.

Below the pipeline lie the grader's own parts: ``autograder.remote``, the check machinery,
``autograder.checks``, ``autograder.cells``, ``autograder.notebooks`` and the mutation audit.
"""
