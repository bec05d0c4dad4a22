"""The only place the explorer judges a result: verdicts computed from a report's or a sweep's numbers, in plain
words. Numpy only; the pages and the command line print these sentences and never judge a number themselves."""

NO_VALUE = "—"  # a table cell without a number: an em dash, as a bare "-" is a list bullet in st.table's markdown
