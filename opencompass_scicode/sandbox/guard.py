"""Notices when step code rebinds what the tests rely on to compare results.

A snapshot is taken before the model's code runs; after the model's code and
after every test the harness compares the live objects with it (identity).
"""
import builtins
import sys

# (module, attribute) pairs the official tests use to decide pass or fail.
WATCHED = {
    'numpy': ('allclose', 'isclose', 'array_equal', 'array_equiv', 'all', 'any', 'equal',
              'asarray', 'array', 'abs'),
    'numpy.testing': ('assert_allclose', 'assert_array_equal', 'assert_almost_equal', 'assert_equal'),
    'math': ('isclose',),
    'cmath': ('isclose',),
    'scicode.compare.cmp': ('cmp_tuple_or_list', 'are_dicts_close', 'are_csc_matrix_close',
                            'process_symbol_in_dict'),
}


class Guard:
    def __init__(self, namespace, protected_names=()):
        self.namespace = namespace
        self.modules = {}
        for name in WATCHED:
            module = sys.modules.get(name)
            if module is None:       # not loaded: nothing the tests use from it yet
                continue
            self.modules[name] = (module, {a: getattr(module, a) for a in WATCHED[name] if hasattr(module, a)})
        self.builtins = dict(vars(builtins))
        self.protected = {n: namespace[n] for n in protected_names if n in namespace}

    def violations(self) -> list[str]:
        """Human-readable list of what was rebound since the snapshot (empty if nothing)."""
        found = []
        for name, (module, attrs) in self.modules.items():
            if sys.modules.get(name) is not module:
                found.append(f'sys.modules[{name!r}] was replaced')
            for attr, original in attrs.items():
                if getattr(module, attr, None) is not original:
                    found.append(f'{name}.{attr} was rebound')
        live = vars(builtins)
        for key, original in self.builtins.items():
            if live.get(key, _MISSING) is not original:
                found.append(f'builtins.{key} was rebound or deleted')
        if self.namespace.get('__builtins__') not in (builtins, live):
            found.append('__builtins__ of the program was replaced')
        for name, original in self.protected.items():
            if self.namespace.get(name, _MISSING) is not original:
                found.append(f'{name!r} (bound by the required dependencies) was rebound')
        return found


_MISSING = object()
