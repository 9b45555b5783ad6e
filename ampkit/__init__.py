"""ampkit: build, boot and compare schedulers for asymmetric multicore processors."""

__version__ = "0.1.0"
