"""An SMTP sink for kairos-server's e-mail tests (aiosmtpd, a real SMTP
server): listens on 127.0.0.1 on a free port, prints {"port": N} and then
one JSON line per message received (with whether it came over TLS and
the user who authenticated); refuses recipients at nobody@ with 550 (a
permanent failure) and the first message to retry@ with 451 (a
transient one). Stops when its stdin closes.

Options: --starttls CERT KEY offers STARTTLS with that certificate;
--smtps CERT KEY speaks TLS from the first byte; --auth USER PASS
requires that login (after STARTTLS when offered; in the clear with
neither TLS option, as a careless relay would)."""
import argparse
import asyncio
import json
import ssl
import sys

from aiosmtpd.smtp import SMTP, AuthResult, LoginPassword


class Sink:
    def __init__(self):
        self.deferred = set()

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if address.startswith("nobody@"):
            return "550 5.1.1 no such user"
        if address.startswith("retry@") and address not in self.deferred:
            self.deferred.add(address)
            return "451 4.3.0 try again later"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        print(json.dumps({
            "from": envelope.mail_from,
            "to": envelope.rcpt_tos,
            "data": envelope.content.decode("utf-8", "replace"),
            "tls": server.transport.get_extra_info("ssl_object") is not None,
            "user": session.auth_data.login.decode() if session.authenticated else None,
        }), flush=True)
        return "250 OK"


def authenticator(user, password):
    def check(server, session, envelope, mechanism, auth_data):
        ok = (isinstance(auth_data, LoginPassword)
              and auth_data.login == user.encode() and auth_data.password == password.encode())
        return AuthResult(success=ok, auth_data=auth_data if ok else None)
    return check


def context(cert, key):
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(cert, key)
    return ctx


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("--starttls", nargs=2, metavar=("CERT", "KEY"))
    p.add_argument("--smtps", nargs=2, metavar=("CERT", "KEY"))
    p.add_argument("--auth", nargs=2, metavar=("USER", "PASS"))
    a = p.parse_args()
    kw = {}
    if a.starttls:
        kw["tls_context"] = context(*a.starttls)
    if a.auth:
        kw["authenticator"] = authenticator(*a.auth)
        kw["auth_required"] = True
        # aiosmtpd counts only STARTTLS as TLS (--smtps is TLS throughout);
        # with neither, a relay that takes a password in the clear.
        kw["auth_require_tls"] = bool(a.starttls)
    wrap = context(*a.smtps) if a.smtps else None
    loop = asyncio.get_running_loop()
    sink = Sink()
    server = await loop.create_server(lambda: SMTP(sink, **kw), "127.0.0.1", 0, ssl=wrap)
    print(json.dumps({"port": server.sockets[0].getsockname()[1]}), flush=True)
    await loop.run_in_executor(None, sys.stdin.read)


asyncio.run(main())
