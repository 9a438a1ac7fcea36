"""Messages between the machine's step pool (server.py) and the tasks using it (machine.py).

Each message is a pickle behind its length, over a local stream socket. Both
ends are processes of the same run and user: the server reads no message of a
peer that has not shown the pool's key first (server.py).
"""
import pickle
import struct
from typing import Any

_LENGTH = struct.Struct('!Q')


def send(sock, message) -> None:
    """Send `message`, pickled, with its length in front."""
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    sock.sendall(_LENGTH.pack(len(data)) + data)


def exactly(sock, size) -> bytes | None:
    """`size` bytes from `sock`, or None once the other end has gone."""
    chunks, left = [], size
    while left:
        chunk = sock.recv(min(left, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b''.join(chunks)


def receive(sock) -> Any:
    """The next message, or None once the other end has gone (at a message boundary or not)."""
    header = exactly(sock, _LENGTH.size)
    if header is None:
        return None
    data = exactly(sock, _LENGTH.unpack(header)[0])
    return None if data is None else pickle.loads(data)
