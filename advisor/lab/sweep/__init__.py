"""Running an experiment's independent tasks: in local processes, or as HTCondor jobs on the
pool (``--executor condor``) with a resumable record of each task in the sweep directory."""
