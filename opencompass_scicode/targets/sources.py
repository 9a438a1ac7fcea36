"""Where missing test targets can be fetched from, and what they must hash to.

Facts, not code: the official SciCode package downloads test_data.h5 by a Google Drive file id
(the id below, pinned with the official sha256 by independent harnesses); OpenCompass
publishes its per-step archive on its storage repository's release page (no digest published);
SciCode-Verified publishes its corrected test_data_cleaned.h5 on the Hugging Face hub at a
pinned revision, mirrored byte for byte on its GitHub release, with the sha256 below (pinned
by harnesses that fetch that revision), beside the corrected problems of datasets/verified.py.
A dataset's `targets_url=` (`problems_url=`) replaces these defaults.
"""
from dataclasses import dataclass
from typing import Optional
from urllib.parse import urlsplit

from ..datasets import verified
from ..datasets.files import H5_NAME, H5_SHA256
from . import per_step

H5_SIZE = 1_049_345_865

DRIVE_FILE_ID = '17G_k65N_6yFFZ2O-jQH00Lh6iaw3z-AW'
OFFICIAL_URL = f'https://drive.google.com/uc?export=download&id={DRIVE_FILE_ID}'
OPENCOMPASS_URL = f'https://github.com/open-compass/storage/releases/download/v0.1.0/{per_step.ZIP_NAME}'

VERIFIED_NAME = 'test_data_cleaned.h5'
VERIFIED_SHA256 = '8fb6e575b7b6dda5e48b04dea338fc6af4fe185774b8f19221c96945df9b4142'
VERIFIED_URLS = (
    f'{verified.HUB_FILES}/{VERIFIED_NAME}',
    f'https://github.com/flyingwagner/scicode-verified/releases/download/data/{VERIFIED_NAME}',
)


@dataclass(frozen=True)
class Source:
    """One place to fetch targets from. `sha256`: what the downloaded file must hash to (for an
    archive: the archive itself or the test_data.h5 it holds; None, for archives only: nothing
    published, the archive is checked by its own CRCs and its files are labelled by what they
    hash to, as any found file is). `size`: bytes, when known before asking (for --dry-run)."""
    label: str
    url: str
    file_name: str          # what the download is saved as in the data directory
    sha256: Optional[str]
    size: Optional[int] = None

    @property
    def is_archive(self) -> bool:
        """Whether the source is a zip archive (OpenCompass's per-step files), unpacked after
        download."""
        return self.file_name.endswith('.zip')


OFFICIAL = Source('official', OFFICIAL_URL, H5_NAME, H5_SHA256, H5_SIZE)
OPENCOMPASS = Source('opencompass', OPENCOMPASS_URL, per_step.ZIP_NAME, None)
VERIFIED = tuple(Source('verified', url, VERIFIED_NAME, VERIFIED_SHA256) for url in VERIFIED_URLS)
NAMED = {'official': (OFFICIAL,), 'opencompass': (OPENCOMPASS,), 'verified': VERIFIED}


def file_name_of(url, default) -> str:
    """The name a URL's file is saved under: the mode's targets file (where the search of
    locate.py finds it), or, for an archive, the archive's own name (unpacked after)."""
    name = urlsplit(url).path.rsplit('/', 1)[-1]
    return name if name.endswith('.zip') else default


def sources_for(mode, urls=(), sha256=None) -> list['Source']:
    """The sources tried, in order, for a dataset's targets `mode` ('official' or 'verified'):
    its own `urls` (targets_url) if any, else the mode's defaults. `sha256` (targets_sha256)
    replaces the digest each must match."""
    if urls:
        default = VERIFIED_NAME if mode == 'verified' else H5_NAME
        expected = sha256 or (VERIFIED_SHA256 if mode == 'verified' else H5_SHA256)
        named = [(url, file_name_of(url, default)) for url in urls]
        return [Source('targets_url', url, name, sha256 if name.endswith('.zip') else expected)
                for url, name in named]
    chosen = NAMED['verified'] if mode == 'verified' else NAMED['official'] + NAMED['opencompass']
    if sha256:
        chosen = [Source(s.label, s.url, s.file_name, sha256, None) for s in chosen]
    return list(chosen)


def problem_sources(urls=(), sha256=None) -> list['Source']:
    """The sources tried, in order, for SciCode-Verified's corrected problems: a dataset's own
    `urls` (problems_url) if any, else the published file and its mirror; each must hash to
    `sha256` (problems_sha256), else to the published digest."""
    expected = sha256 or verified.PROBLEMS_SHA256
    label = 'problems_url' if urls else 'verified problems'
    return [Source(label, url, verified.PROBLEMS_NAME, expected) for url in (urls or verified.PROBLEMS_URLS)]
