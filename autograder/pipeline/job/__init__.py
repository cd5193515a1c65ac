"""One submission graded on a worker, bytes in and a ``Result`` out (``job``), with no course
folder: nbgrader's autograde with short polls and test cells graded from outside
(``execute``), a time budget per unit (``budget``), the notebook made gradable (``sanitize``),
bounded outputs (``outputs``), the worker's scratch folder, caches and end of every job
(``station``), its gradebook (``job_gradebook``), nbgrader forked from a warm server
(``runner``, ``launch``) and the packages a worker must share with the instructor
(``fingerprint``). It may import the sandbox, the pipeline's shared modules and the grader
below the pipeline (``autograder.cells``, the checks, ``autograder.remote``), never the
executor, term or ledger."""
