"""systemd readiness (``Type=notify``) with the standard library: a datagram to $NOTIFY_SOCKET."""

from __future__ import annotations

import os
import socket


def sd_notify(message: str) -> bool:
    """Send ``READY=1``, ``RELOADING=1``, ``STOPPING=1``, ``STATUS=...``; False outside systemd."""
    address = os.environ.get("NOTIFY_SOCKET")
    if not address:
        return False
    if address.startswith("@"):
        address = "\0" + address[1:]
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.connect(address)
        sock.sendall(message.encode())
    return True
