"""The engine: a temperature inside every attention layer, the statistics of every attention row, and the report
of an analysis. Imports torch and transformers; the floors below it (core, models) do not know it exists."""
