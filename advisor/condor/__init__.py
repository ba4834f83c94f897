"""A live HTCondor 25 pool behind the daemon's ports (``advisor.ports``), through ``htcondor2``.

``build_condor_pool(config)`` (in ``factory``) returns the source and sinks the daemon registers
under pool kind ``condor``. Pure translation (ads to events, advice to attributes) lives in
modules that never import ``htcondor2``, so it is tested on recorded ads without a pool. The
calls to the collector and the schedds run in a child process with a deadline
(``bounded_calls``): the bindings hold the GIL while they wait.
"""
