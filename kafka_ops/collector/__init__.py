"""What runs on a broker host (remote: the collector's entry point, standard library only) and its build (ship)."""
