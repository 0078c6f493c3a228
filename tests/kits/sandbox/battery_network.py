"""Escape-battery attacks on the network: TCP, UDP and unix sockets to listeners the test runs,
and a name lookup."""

from __future__ import annotations

from battery_case import Case, walls

NETWORK = [
    Case(
        "TCP to a local listener",
        "network",
        "connect to a TCP listener the test runs on 127.0.0.1",
        "import socket\ns = socket.create_connection(('127.0.0.1', {tcp_port}), 2)\n"
        "s.sendall(b'ESCAPED'); print('ESCAPED')",
        walls("audit", "seccomp", "netns", "landlock"),
    ),
    Case(
        "UDP to a local listener",
        "network",
        "send a datagram to a UDP listener the test runs",
        "import socket\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
        "s.sendto(b'ESCAPED', ('127.0.0.1', {udp_port})); print('ESCAPED')",
        walls("audit", "seccomp", "netns"),
    ),
    Case(
        "unix socket outside",
        "network",
        "connect to a unix socket the test listens on, outside the workspace",
        "import socket\ns = socket.socket(socket.AF_UNIX)\ns.connect('{unix_path}')\n"
        "s.sendall(b'ESCAPED'); print('ESCAPED')",
        walls("audit", "seccomp", "process"),
    ),
    Case(
        "DNS lookup",
        "network",
        "resolve a host name (localhost: this host has no DNS to reach)",
        "import socket\nprint(socket.getaddrinfo('localhost', 80)); print('ESCAPED')",
        walls("audit", "landlock"),
    ),
]
