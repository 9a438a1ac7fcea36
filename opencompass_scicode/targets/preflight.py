"""A run's datasets, checked before any work: their data, and the targets they are scored against.

Here, next to the targets (locate.py), because these are the checks that need them: a
dataset to be scored must have targets covering every one of its scored steps before a model
is asked anything (fetched first when missing, fetch.py), and validation targets still to be
regenerated become a task of their own.
"""
from ..datasets import SciCodeDataset
from ..errors import ConfigError
from ..registry import build_dataset
from .fetch import Fetching, needed_sources
from .locate import check_coverage, missing_regenerated, plan_targets


def ready_datasets(dataset_cfgs, scoring, fetching=None) -> list[SciCodeDataset]:
    """The datasets of the config's entries, their problems loaded (fetching the data files
    and SciCode-Verified's corrected problems if needed, checking sample_ids); with `scoring`,
    their targets are in place (`fetching` says whether missing ones may be fetched, or only
    planned in a dry run) and cover them. A dry run writes nothing: it reads missing data files
    from a temporary copy, and leaves out a dataset whose problems it would fetch first or cannot
    have at all: they cannot be read yet (`fetching.planned` names it)."""
    fetching = fetching or Fetching()
    datasets = []
    for i, ds_cfg in enumerate(dataset_cfgs):
        key = f'datasets[{i}]'
        dataset = build_dataset(ds_cfg, key=key)
        # a dry run whose problems are still to be fetched, or cannot be read (offline)
        if not (fetching.ensure_data_files(dataset) and fetching.ensure_problems(dataset)):
            if scoring:
                fetching.ensure(dataset)                # its targets' fetch is planned all the same
            continue
        try:
            dataset.problems  # loads (and fetches) the data, checks sample_ids
        except ConfigError as exc:
            raise exc.within(key=key) from None
        if scoring and fetching.ensure(dataset):
            check_coverage(dataset)
        datasets.append(dataset)
    return datasets


def to_regenerate(datasets) -> list[str]:
    """Abbrs of the datasets whose regenerated targets are incomplete, one per targets file."""
    chosen = {}
    for ds in datasets:
        if needed_sources(ds) is None and missing_regenerated(ds):     # a dry run may not have fetched
            chosen.setdefault(plan_targets(ds)[1], ds.abbr)
    return sorted(chosen.values())
