"""The only writer of the course gradebook and ``autograded/``: a class autograded, jobs out
to the executor and results merged as they arrive (``grade``), solution cells that copy the
reference flagged for review (with the term's ``copies``), and hand grades from a CSV (``manual``). It may
import every part below it (the executor, the job, the sandbox, the term's ``inert`` and ``copies``, the
pipeline's shared modules); only the demo and the commands import it."""
