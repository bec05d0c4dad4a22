"""The command line: its parser (no torch) and its commands."""
