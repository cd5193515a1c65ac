"""The instructor pipeline: grade a class in parallel, give feedback, report, hand out.

``python -m autograder grade|feedback|export|report|bundle|demo`` (see ``autograder/__main__.py``).

Modules:
    ``course``    the course directory: units, submissions, gradebook paths;
    ``job``       one submission graded, bytes in, a result out (nbgrader's Autograde, one kernel);
    ``station``   a grading worker's scratch folder and caches; each job's processes ended;
    ``executor``  where jobs run: Dask distributed (a local cluster, or an existing one);
    ``fingerprint`` the packages a worker must share with the instructor;
    ``kernel``    the grading kernel: memory, file-size, CPU and output bounds;
    ``guard``     the kernel's audit hook: no files outside its folder, no processes;
    ``gradebook`` a template gradebook for jobs, and merging results into the course's;
    ``grade``     the ledger: jobs out to the executor, results merged (one writer of the gradebook);
    ``feedback``  feedback HTML in parallel; hidden-test tracebacks reduced to messages;
    ``report``    the class report: score distributions, pass rates, frequent mistakes;
    ``bundle``    what students get: release notebooks, a ``course``-only wheel, requirements;
    ``demo``      the whole job on a scratch course with made-up students.

jsonschema imports ``rfc3987_syntax`` when it is installed, which builds a grammar for
1.3 to 2.4 s in every process that imports nbformat (the instructor's, each grading
worker, each ``nbgrader`` command). Notebooks never use IRI formats, so the import is
skipped here, before any module of the pipeline imports nbformat; jsonschema then leaves
that one format out.
"""
import sys

sys.modules.setdefault("rfc3987_syntax", None)   # `import rfc3987_syntax` -> ImportError
