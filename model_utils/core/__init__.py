"""The floor everything stands on: numpy and the standard library only (no torch, no transformers), so the pages,
the Softmax lab and the command line's checks start fast. Errors, limits, statistic names, schedules, paths."""
