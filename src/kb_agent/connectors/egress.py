"""Where kb-agent may connect: globally routable addresses only, checked once and then used.

`public_address` resolves a host once and refuses it unless every address it resolves to is global
(`ipaddress` `is_global`, plus the ranges Python still calls global: multicast, 192.0.0.0/24, and IPv6
forms that embed an IPv4 address - mapped, 6to4, Teredo, NAT64 - judged by that address). The caller then
connects to exactly that address, so a second DNS answer cannot rebind the request to another host."""

from __future__ import annotations

import ipaddress
import socket

from kb_agent.connectors.http import ConnectorError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
_NOT_GLOBAL = [ipaddress.ip_network(n) for n in ("192.0.0.0/24", "64:ff9b:1::/48")]
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


class FetchDenied(ConnectorError):
    pass


def is_public(address: IPAddress) -> bool:
    if isinstance(address, ipaddress.IPv6Address):
        embedded = address.ipv4_mapped or address.sixtofour
        if embedded is None and address.teredo is not None:
            embedded = address.teredo[1]
        if embedded is None and address in _NAT64:
            embedded = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        if embedded is not None:
            return is_public(embedded)
    if address.is_multicast or address.is_unspecified or any(address in net for net in _NOT_GLOBAL):
        return False
    return address.is_global


def public_address(
    host: str,
    port: int,
    *,
    allow_hosts: set[str] | frozenset[str] = frozenset(),
    allow_nets: list | tuple = (),
    what: str = "web_fetch",
    resolver=None,
) -> str:
    """The one address to connect to for `host`; FetchDenied if any address it resolves to is not public
    (unless the host or that address's network is allow-listed). `resolver` defaults to getaddrinfo."""
    try:
        infos = (resolver or socket.getaddrinfo)(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise ConnectorError(f"{what}: cannot resolve {host}") from exc
    addresses = list(dict.fromkeys(ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos))
    if not addresses:
        raise ConnectorError(f"{what}: cannot resolve {host}")
    if host.lower() not in allow_hosts:
        for address in addresses:
            if not is_public(address) and not any(address in net for net in allow_nets):
                raise FetchDenied(
                    f"{what}: {host} resolves to a non-public address ({address}); "
                    "add it to KB_AGENT_WEB_ALLOWLIST to allow it"
                )
    return str(addresses[0])
