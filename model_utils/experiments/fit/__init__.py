"""Fitting a temperature on a corpus: a constant T on top of a RoPE recipe, or a length-dependent family on the
plain model, chosen by a bounded scalar optimizer on training documents and scored on held-out ones."""
