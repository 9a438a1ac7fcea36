"""Errors that carry enough context for the user to fix their input."""
import difflib
import errno


class UserFacingError(Exception):
    """An error whose message is meant to be shown to the user as is."""


class ConfigError(UserFacingError):
    """A config file asks for something that cannot work.

    The message names the file (and the line, for code that failed), the key
    and what to do about it.
    """

    def __init__(self, message, file=None, key=None, fix=None, line=None):
        self.message = message
        self.file = file
        self.key = key
        self.fix = fix
        self.line = line
        parts = []
        if file:
            parts.append(f'{file}, line {line}' if line else str(file))
        if key:
            parts.append(f'key `{key}`')
        where = ': '.join(parts)
        text = f'{where}: {message}' if where else message
        if fix:
            text += f'\n  fix: {fix}'
        super().__init__(text)

    def within(self, key=None, file=None) -> 'ConfigError':
        """The same error seen from an enclosing key and/or file."""
        inner = self.key
        if key and inner and not inner.startswith(key):
            inner = f'{key}.{inner}'
        elif key and not inner:
            inner = key
        return ConfigError(self.message, file=self.file or file, key=inner, fix=self.fix,
                           line=self.line)


class DataError(UserFacingError):
    """The benchmark data is missing, incomplete or not the official one."""


class NoSpaceError(UserFacingError):
    """A file system the run writes to is full, or its quota used up. The run cannot go on; what
    was written before stays whole (appends are per record, other files replaced whole), so -r
    goes on once there is room."""

    SAYS, UNWRITTEN = 'no space left on device: ', ' could not be written.'

    def __init__(self, path):
        self.path = path
        super().__init__(f'{self.SAYS}{path}{self.UNWRITTEN}\n'
                         f'  fix: make room on that file system (or raise its quota), then continue '
                         f'with -r; what was saved is kept and only what is missing is asked again')

    @classmethod
    def path_in(cls, text) -> str | None:
        """The path the last such error in `text` (a task's log, `error: ` before it) names, or None."""
        said = [line.split(cls.SAYS, 1)[1] for line in text.splitlines()
                if line.startswith('error: ' + cls.SAYS)]
        return said[-1].removesuffix(cls.UNWRITTEN) if said else None


class ThreadFailed(UserFacingError):
    """A thread others wait on (a step pool's slot thread, the receiver of a pool's answers) raised: whoever
    waits on it gets this instead of waiting for what it would have done."""

    def __init__(self, thread, exc):
        self.thread = thread
        super().__init__(f'{thread} stopped: {type(exc).__name__}: {exc}')

    @classmethod
    def passing_on(cls, thread, exc) -> BaseException:
        """What the waiter raises for `exc`, raised in `thread`: an error the user can act on
        (a full disk) as it is, anything else named with the thread it stopped."""
        if out_of_space(exc) and not isinstance(exc, NoSpaceError):
            return NoSpaceError(exc.filename or 'a file of the run')
        return exc if isinstance(exc, (UserFacingError, KeyboardInterrupt)) else cls(thread, exc)


def out_of_space(exc) -> bool:
    """Whether `exc` is a write refused for lack of space (ENOSPC) or of quota (EDQUOT)."""
    return isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)


def close_matches(word, choices, n=1, cutoff=0.6) -> list[str]:
    """The `choices` nearest to `word` (difflib's measure), best first; [] if none is near."""
    return difflib.get_close_matches(str(word), [str(c) for c in choices], n=n, cutoff=cutoff)


def did_you_mean(word, choices, n=1, cutoff=0.6, quote=True) -> str:
    """A fix's opening for a misspelt `word`: "did you mean 'x'? " (up to `n` names, quoted
    unless `quote` is False), or '' when no choice is near."""
    close = close_matches(word, choices, n, cutoff)
    if not close:
        return ''
    return f'did you mean {", ".join(repr(c) if quote else c for c in close)}? '


# The exit statuses of the package's commands (run.py, opencompass-scicode, targets.fetch,
# targets.standin), one a line with what it means: the docs' exit-code reference is generated from
# these lines. A task process tells its runner more (tasks/contract.py).
EXIT_OK = 0             # everything asked for was done
EXIT_FAILED = 1         # a task failed, steps could not be generated or scored, or a disk filled up
EXIT_USER_ERROR = 2     # the config, the command line or the data is wrong, missing data could not be fetched, or an API model's endpoint cannot answer (the probe): nothing was run
EXIT_INTERRUPTED = 130  # Ctrl-C or SIGTERM: what finished is kept; continue with -r
