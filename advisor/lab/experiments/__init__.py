"""Experiments that reproduce the papers' tables and figures, one module each.

A module here is found by ``htcondor-advisor experiment`` when it defines ``NAME`` (the
sub-command), ``HELP`` (one line), ``add_arguments(parser)`` and ``run(args) -> int``. Each writes a
CSV of its figures and PNG plots into ``--out``.
"""
