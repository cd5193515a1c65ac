"""Hand-in through an LMS (Canvas, Moodle) and the grades back: ``nbgrader zip_collect``'s
collector and the grades CSV (``lms``), the download unpacked within limits (``extract``,
``safe_unzip``), who handed each file in (``uploads``, ``roster``) and the plan for the whole
download (``plan``). It may import the pipeline's shared modules (``course``, ``names``),
nothing of the job, executor or ledger."""
