"""Where a step's test program is assembled (official layout).

    <required_dependencies>
    <code of steps 1..k-1>
    <code of step k>

    from scicode.parse.parse import process_hdf5_to_tuple

    targets = process_hdf5_to_tuple('<step_id>', <number of tests>)
    target = targets[0]

    <test case 1>
    ...
"""

# Problems 2 and 28 call scipy.integrate.simps, removed in SciPy 1.14.
SIMPS_SHIM = (
    'import scipy.integrate as _scicode_integrate\n'
    "if not hasattr(_scicode_integrate, 'simps'):\n"
    '    def _scicode_simps(y, x=None, dx=1.0, axis=-1, even=None):\n'
    '        return _scicode_integrate.simpson(y, x=x, dx=dx, axis=axis)\n'
    '    _scicode_integrate.simps = _scicode_simps\n'
    'del _scicode_integrate\n'
)


def code_prefix(dependencies, prior_codes, code):
    """Program text before the tests, exactly as the official generator writes it."""
    previous = '\n'.join(prior_codes)
    return f'{dependencies}\n{previous}\n' + '\n' + code


def test_suffix(step_id, test_cases):
    lines = ['\n\nfrom scicode.parse.parse import process_hdf5_to_tuple\n\n',
             f"targets = process_hdf5_to_tuple('{step_id}', {len(test_cases)})\n"]
    for index, test in enumerate(test_cases):
        lines.append(f'target = targets[{index}]\n\n')
        lines.extend(line + '\n' for line in test.split('\n'))
    return ''.join(lines)


def needs_simps_shim(program):
    return 'simps' in program


def step_program(prefix, step_id, test_cases, simps_shim=True):
    program = prefix + test_suffix(step_id, test_cases)
    if simps_shim and needs_simps_shim(program):
        program = SIMPS_SHIM + program
    return program
