"""The grading kernel and the walls around it: the kernel and its bounds (``kernel``), its
audit hook (``guard``) and Landlock (``landlock``), the bubblewrap command line (``bwrap``),
the kernelspec that puts them together (``kernelspec``), the warm zygote that forks kernels
into their sandboxes (``zygote``, ``spawn``), the control groups that bound a job or a hub
student's server as a whole (``limits``, ``cgroups``, ``cgroup_v1``, ``cgroup_v2``,
``cgroup_base``) and the kernel's CPU time read from outside where no group can be made
(``kernel_cpu``). It may import the pipeline's shared modules (``course``) and the grader
below the pipeline (``autograder.held_out``), never the job, executor, term or ledger. A
sandboxed kernel imports this package, so this file holds no code."""
