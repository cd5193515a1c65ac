"""The instructor pipeline: grade a class in parallel, give feedback, report, hand out.

``python -m autograder grade|feedback|export|report|bundle|demo`` (see ``autograder/__main__.py``).

Modules:
    ``course``    the course directory: units, submissions, gradebook paths;
    ``inbound``   nbgrader's collect, believing no name, time, owner or link a student controls;
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
"""
