"""The text of a step's program before its tests, as the official generator writes it.

    <required_dependencies>
    <code of steps 1..k-1>
    <code of step k>

The official harness then appends the tests (`process_hdf5_to_tuple` and each test case);
benchmarks/official_like.py (step_program) writes that whole file for the official-style
runner the benchmarks and tests compare with. Here the sandbox runs the tests after the prefix
(sandbox/harness.py).
"""

# Problems 2 and 28 call scipy.integrate.simps, removed in SciPy 1.14.
SIMPS_SHIM = (
    'import scipy.integrate as _scicode_integrate\n'
    "if not hasattr(_scicode_integrate, 'simps'):\n"
    '    def _scicode_simps(y, x=None, dx=1.0, axis=-1, even=None):\n'
    '        from scipy.integrate import simpson\n'
    '        return simpson(y, x=x, dx=dx, axis=axis)\n'
    '    _scicode_integrate.simps = _scicode_simps\n'
    '    del _scicode_simps\n'
    'del _scicode_integrate\n'
)


def dependency_imports(dependencies) -> list[tuple[str, str | None]]:
    """(module, name bound in the program) for each import of a problem's dependency lines.

    The module is None for a relative import, the name None for `import *`.
    """
    import ast
    try:
        tree = ast.parse(dependencies)
    except SyntaxError:
        return []
    pairs = []
    for node in tree.body:
        if isinstance(node, ast.Import):
            pairs.extend((a.name, a.asname or a.name.split('.')[0]) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = node.module if not node.level else None
            pairs.extend((module, None if a.name == '*' else a.asname or a.name) for a in node.names)
    return pairs


def code_prefix(dependencies, prior_codes, code) -> str:
    """Program text before the tests, exactly as the official generator writes it."""
    previous = '\n'.join(prior_codes)
    return f'{dependencies}\n{previous}\n' + '\n' + code


def needs_simps_shim(*texts) -> bool:
    """Whether any of `texts` calls scipy's `simps`, which newer SciPy lacks."""
    # Only where it is used: the shim imports scipy.integrate, which is slow.
    return any('simps' in text for text in texts)


def with_simps_shim(program) -> str:
    """`program`, with the shim that brings `simps` back in front where it calls it."""
    return SIMPS_SHIM + program if needs_simps_shim(program) else program
