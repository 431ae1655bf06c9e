"""Fact gathering: standard library only, runnable on a bare broker host (the Ansible role and the Spark job
ship it). It reads; it never writes to a broker's files."""
