"""jupyterhub-idle-culler as the hub's service runs it: stopped at once by the hub's SIGINT.

A hub started in the background (``make hub &``, nohup) hands its children an ignored SIGINT,
and the culler would then sit out JupyterHub's 30 s before SIGTERM at every shutdown.
"""
import signal

from jupyterhub_idle_culler import main

if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.default_int_handler)
    main()
