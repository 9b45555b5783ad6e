"""The slurm tier's cluster: started once for the session (cluster.py)."""

from collections.abc import Iterator

import pytest

from tests.slurm.cluster import Cluster, NotRoot, local_cluster, missing_programs


@pytest.fixture(scope="session")
def slurm_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    missing = missing_programs()
    if missing:
        pytest.skip(f"SLURM is not installed ({', '.join(missing)} missing): run 'make setup'")
    try:
        with local_cluster(tmp_path_factory.mktemp("slurm")) as cluster:
            yield cluster
    except NotRoot as e:
        pytest.skip(str(e))
