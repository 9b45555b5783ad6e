# Thin wrappers: setup/install.sh installs what is missing, the ampkit CLI
# does the work. 'make demo' and 'make test' are the two commands.
VENV   := .venv
AMPKIT := $(VENV)/bin/ampkit

.PHONY: help setup demo test test-gem5 kernel kernel-debug images report bench lint lock clean

help:
	@echo "make demo          build the kernel and initramfs, run a mix on QEMU 2B2L, summarise"
	@echo "make test          every test tier this machine can run (gem5: its CI subset)"
	@echo "make test-gem5     the whole gem5 tier (every platform boot, PARSEC disk, calibration)"
	@echo "make setup         install missing Debian packages and the Python environment"
	@echo "make kernel        build the patched kernel (kernel-debug: the debug variant)"
	@echo "make images        build the guest programs and the initramfs"
	@echo "make report DIR=d  collect the run directories under d and write d/report/"
	@echo "make bench         print build and boot figures, COLAB overhead, what the series costs cfs on gem5, WASH and COLAB worker time, futex accounting hold time, the futex selftests on the unpatched kernel, analysis at 10k runs, what each workload does on gem5 (from the committed runs), campaign planning and executor overhead, gem5 speed and fidelity (with a gem5 build)"
	@echo "make lint          ruff and mypy"
	@echo "make lock          write setup/requirements.lock from the environment (after a dependency change)"
	@echo "make clean         remove build/ and runs/ (kernel builds stay in the cache)"

setup:
	@./setup/install.sh

lock:
	@{ echo "# The exact versions of the kit's own environment (.venv), which 'make setup'"; \
	   echo "# and CI install; pyproject.toml gives the ranges the kit works with."; \
	   echo "# Regenerate after changing a dependency: make lock"; \
	   $(VENV)/bin/pip freeze --exclude-editable; } > setup/requirements.lock

demo: setup
	$(AMPKIT) demo

test: setup
	$(VENV)/bin/pytest

# the whole gem5 tier, beyond the subset make test runs (tests/gem5/conftest.py)
test-gem5: setup
	AMPKIT_GEM5_FULL=1 $(VENV)/bin/pytest tests/gem5

kernel: setup
	$(AMPKIT) build kernel

kernel-debug: setup
	$(AMPKIT) build kernel-debug

images: setup
	$(AMPKIT) build initramfs

report: setup
	$(AMPKIT) report $(or $(DIR),runs)

bench: setup
	$(VENV)/bin/python benchmarks/foundation.py
	$(VENV)/bin/python benchmarks/colab_overhead.py
	$(VENV)/bin/python benchmarks/cfs_overhead.py
	$(VENV)/bin/python benchmarks/wash_overhead.py
	$(VENV)/bin/python benchmarks/colab_worker.py
	$(VENV)/bin/python benchmarks/colab_worker.py --policy hsp
	$(VENV)/bin/python benchmarks/colab_worker.py --policy eef
	$(VENV)/bin/python benchmarks/optimum_time.py
	$(VENV)/bin/python benchmarks/futex_hold.py
	$(VENV)/bin/python benchmarks/futex_selftests_unpatched.py
	$(VENV)/bin/python benchmarks/analysis_scale.py
	$(VENV)/bin/python benchmarks/workloads.py
	$(VENV)/bin/python benchmarks/workload_behaviour.py
	$(VENV)/bin/python benchmarks/campaign.py
	$(VENV)/bin/python benchmarks/gem5_speed.py
	$(VENV)/bin/python benchmarks/gem5_fidelity.py

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

clean:
	rm -rf build runs
