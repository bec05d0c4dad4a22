"""The words the explorer says, pinned as text: each file here holds what one kind of sentence of
model_utils/verdicts/words/ says about the committed results and a few synthetic ones chosen for their edge cases
(no rise, no break, a single document, a negative saving, a remapping, two layer types, ...). `python -m
tests.golden --update` (`make golden`) writes them again; test_golden.py compares them in `make test`. A changed word
is one regenerated file, reviewed as a diff; the numbers themselves are asserted on the records elsewhere."""
