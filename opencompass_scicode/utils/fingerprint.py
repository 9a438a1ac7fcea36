"""Short, stable digests: of plain data (settings that must match for work to be reused), and of
values such as a step's test targets (arrays, sparse matrices, containers of them)."""
import hashlib
import json
import sys


def fingerprint(obj) -> str:
    """16 hex digits of the sha256 of `obj` as sorted JSON: equal settings, equal fingerprints."""
    blob = json.dumps(obj, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode('utf-8')).hexdigest()[:16]


def value_digest(value) -> str:
    """A digest of a value by what it holds (types, shapes, dtypes, element bytes), never by how a
    library pickles it: the same targets give the same digest under any numpy."""
    digest = hashlib.sha256()
    _feed(digest, value, 0)
    return digest.hexdigest()[:16]


def _feed(digest, value, depth):
    np = sys.modules.get('numpy')
    kind = type(value)
    if depth > 20:
        digest.update(b'?')
    elif np is not None and kind is np.ndarray:
        digest.update(f'A{value.dtype.str}{value.shape}'.encode())
        if value.dtype.hasobject:
            for item in value.flat:
                _feed(digest, item, depth + 1)
        else:
            digest.update(np.ascontiguousarray(value).tobytes())
    elif kind in (list, tuple):
        digest.update(f'{kind.__name__}{len(value)}'.encode())
        for item in value:
            _feed(digest, item, depth + 1)
    elif kind is dict:
        digest.update(f'D{len(value)}'.encode())
        for key in sorted(value, key=repr):
            _feed(digest, key, depth + 1)
            _feed(digest, value[key], depth + 1)
    elif np is not None and isinstance(value, np.generic):
        _feed(digest, np.asarray(value), depth + 1)
    elif hasattr(value, 'tocoo') and hasattr(value, 'shape'):       # a scipy sparse matrix
        coo = value.tocoo()
        coo.sum_duplicates()
        digest.update(f'S{type(value).__name__}{coo.shape}'.encode())
        for part in (coo.row, coo.col, coo.data):
            _feed(digest, part, depth + 1)
    else:
        digest.update(f'{type(value).__name__}:{value!r}'.encode())
