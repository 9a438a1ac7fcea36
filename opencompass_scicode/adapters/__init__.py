"""Translations of other harnesses' configs and command lines into this package's configs.

`opencompass/`: OpenCompass's config files, names and run.py flags; `agentcompass/`: its
`run` command. Each only translates, into the config this package reads. The core never
imports this package; the face (cli.py) does, and importing it installs OpenCompass's
dialect in the config loader (config/dialects.py), so that configs written in OpenCompass's
shape load as they do in OpenCompass.
"""
from ..config.dialects import install
from .opencompass.dialect import DIALECT as OPENCOMPASS

install(OPENCOMPASS)
