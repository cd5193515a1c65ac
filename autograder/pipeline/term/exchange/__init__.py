"""nbgrader's exchange, where students fetch and hand in: where it lives (``exchange``), a
release that keeps to the schedule (``release``), and a collect that believes no name, time,
owner or link a student controls (``collect``, copying with ``nofollow``; what a folder claims
is judged by ``autograder.pipeline.claim``), since every student can write to the inbound
folder and nbgrader's own collect believes its names and times and follows its links with
the instructor's rights. It may import the pipeline's shared modules and
``autograder.notebooks``, nothing of the job, executor or ledger."""
