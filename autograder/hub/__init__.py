"""The course's JupyterHub (``make hub``, ``hub/jupyterhub_config.py``): a hub fit for credit
on one Linux server, where every user's server is a sandbox of its own, a student's held to
its limits by a control group (``autograder.pipeline.sandbox.limits`` and ``cgroups``, which the
grader's jobs use too).

Modules:
    ``accounts``    a Unix account per user, made by the hub (a uid of their own);
    ``homes``       a home per student on a file system image of its own size (the disk limit);
    ``sandbox``     the bubblewrap command a user's server runs in: what it sees;
    ``spawner``     JupyterHub's spawner that puts the four together, and ends it all at stop;
    ``instructor``  the course handed to the instructor's account, whose server is not root;
    ``exchange``    each student's own inbound and feedback folders, and collect from them;
    ``student_env`` the environment student servers run from, built from the student bundle;
    ``state``       the hub's secrets and database in files of mode 0600 (``hub/state/hub``);
    ``roster``      the class list a hub makes its logins from;
    ``logins``      one password per person, rate-limited failures, strong instructor passwords.
    ``origins``     where users open the hub, and each user's server on a host of its own.

``python -m autograder.hub -f hub/jupyterhub_config.py`` starts it (``__main__``).
"""
