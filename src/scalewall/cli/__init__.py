"""Command-line interface: thin modules over the Python API."""
