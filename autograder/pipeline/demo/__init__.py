"""``make demo``: the whole instructor job on a scratch course with a made-up class
(``run``), its students (``scenario``), the notebook bugs they carry (``mutations``) and the
bad submissions that must be graded without a crash (``bad``). The top of the pipeline, it
may import every part of it and the mutation audit."""
