"""The only place the explorer judges a result: verdicts computed from a report's or a sweep's numbers, as records
(core/records/verdict.py) and enums, and one package that puts them into words (words/). Numpy only; the pages and
the command line print those words and never judge a number themselves."""
