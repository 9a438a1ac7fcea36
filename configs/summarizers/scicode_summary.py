# This package's own summary (`--summarizer scicode_summary`); `scicode` is OpenCompass's summarizer.
# Rows: models (layout 'wide'), or models x dataset groups (layout 'long'; 'auto' picks it when
# there is more than one group, e.g. several generation modes). Columns: main-problem and sub-step
# rates (with 95% intervals), without and with background side by side, plus the kind of targets
# used. Below: paired differences, steps per failure category, inference usage and, with
# known_defects=True, the rates without the steps SciCode-Verified lists as defective (beside the
# official ones).
from opencompass_scicode.summarizers import SciCodeSummarizer

summarizer = dict(type=SciCodeSummarizer, plot=True, known_defects=True, layout='auto')
