# Rows: models. Columns: main-problem and sub-step rates, without and with
# background side by side, per split, plus the kind of targets used.
from opencompass_scicode.summarizers import SciCodeSummarizer

summarizer = dict(type=SciCodeSummarizer, plot=True)
