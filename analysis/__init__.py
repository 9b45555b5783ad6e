"""The analysis stage: run directories -> tidy tables -> metrics -> reports.

This folder is the package ``ampkit.analysis`` (``ampkit/analysis`` links
here), so it belongs to the one ampkit package and its one CLI.
"""
