"""Instructor tools for the course notebooks (never shipped to students).

``python -m autograder.notebooks sync``     fill the read-only "provided" cells of later
                                            units from the solution cells of earlier ones,
                                            and strip outputs from ``source/``;
``python -m autograder.notebooks release``  sync, then ``nbgrader generate_assignment``
                                            for every unit into ``release/``, normalised so
                                            that regenerating is byte-stable;
``python -m autograder.notebooks lint``     the static rules every source and release
                                            notebook must follow;
``python -m autograder.notebooks figures``  execute the source notebooks that have cells
                                            tagged ``stretch-figure`` and save those cells'
                                            plots as ``docs/img/<cell id>.png``.

``python -m autograder.notebooks schedule`` the term in ``schedule.toml``: each unit's
                                            window, whose solutions its release carries,
                                            and whether any unit would go out too early.

Modules: ``units`` (where the notebooks are, reading and writing them), ``sync``,
``release``, ``lint``, ``figures``, ``schedule`` (the term) and ``handout`` (what may go
out to students, and when).
"""
