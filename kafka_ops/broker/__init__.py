"""The broker model: what a Kafka broker of a given version does with its files at its next start and after.

Standard library only (shipped to broker hosts with the collector). Below the checks: the checks, the forecast,
the report's ``next_start`` plan and the fleet job read the model; it never imports a check.

* ``versions``: every behaviour that changed between releases (first release, ticket, source at the tag).
* ``startup``: what the next start does to each segment (load as is, rebuild indexes, recover, truncate).
* ``plan``: the whole next start of a host (``next_start`` in the report): broker starts or exits, each log
  dir online or offline, each segment's fate.
* ``timestamps``, ``retention``, ``forecast``, ``arrivals``: what time and size retention delete, and when.
* ``cleaner``: what the log cleaner does (buffers, the bugs of seed 001).
"""
