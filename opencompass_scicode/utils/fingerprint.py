"""A short, stable digest of plain data: settings that must match for work to be reused."""
import hashlib
import json


def fingerprint(obj):
    blob = json.dumps(obj, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode('utf-8')).hexdigest()[:16]
