"""An SMTP sink for kairos-server's e-mail tests (aiosmtpd, a real SMTP
server): listens on 127.0.0.1 on a free port, prints {"port": N} and then
one JSON line per message received; refuses recipients at nobody@ with
550 (a permanent failure) and the first message to retry@ with 451 (a
transient one). Stops when its stdin closes."""
import asyncio
import json
import sys

from aiosmtpd.smtp import SMTP


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
        }), flush=True)
        return "250 OK"


async def main():
    loop = asyncio.get_running_loop()
    sink = Sink()
    server = await loop.create_server(lambda: SMTP(sink), "127.0.0.1", 0)
    print(json.dumps({"port": server.sockets[0].getsockname()[1]}), flush=True)
    await loop.run_in_executor(None, sys.stdin.read)


asyncio.run(main())
