"""Errors that carry enough context for the user to fix their input."""


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

    def within(self, key=None, file=None):
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
