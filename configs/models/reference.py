# Answers each step with its gold code: the offline default, validation split only.
from opencompass_scicode.models import ReferenceModel

models = [dict(type=ReferenceModel, abbr='reference')]
