"""Student-facing helpers: datasets, plots and widgets. Contains no graded solution."""
