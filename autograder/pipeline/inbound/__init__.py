"""What students hand in through nbgrader's exchange, collected believing nothing they control.

The exchange's inbound folder is writable by every student: a folder there names a student,
an assignment and a time, and holds files, and a student chooses all of it. nbgrader's own
collect believes the names and times and copies with ``shutil.copytree``, which follows
links with the instructor's rights. Here:

    ``claim``     who, what and when a folder claims, and whether its name, time and owner
                  can be believed;
    ``nofollow``  copying a folder without ever following a link or reading outside it;
    ``collect``   nbgrader's ``ExchangeCollect`` on top of both (``nbgrader collect`` and
                  Formgrader's Collect button, through ``c.ExchangeFactory.collect``).
"""
