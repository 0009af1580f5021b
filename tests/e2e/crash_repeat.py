"""Issue #20 section 2 on the desktop: a reminder in flight when the app is
killed is delivered again after the restart (marked repeat), and the app
*replaces* the notification the dead process showed instead of adding one.

Why the state is rewound by hand: a SIGKILL cannot be timed to land in the
microseconds between the notification server's answer to Notify (the app
writes the id to <db>-notified then) and the engine's journal line saying
the delivery is done. So app_test.py lets the app really show the
notification (a real id, issued by the test's server and written down by
the app itself), kills the app once the delivery is recorded, and then puts
back what the database and the delivery journal hold when the kill lands in
flight (see crates/kairos-engine/src/engine/journal.rs and fire.rs): the
instance `firing` with no delivery recorded, and a journal holding
`["b", key, "desktop"]` without its `"d"` line.

Stdlib only.
"""
import json
import sqlite3


def key_of(db, summary):
    """The instance key of the one reminder whose event is `summary`."""
    c = sqlite3.connect(db)
    try:
        rows = c.execute("SELECT key FROM instances WHERE payload->>'summary' = ?",
                         (summary,)).fetchall()
    finally:
        c.close()
    assert len(rows) == 1, rows
    return rows[0][0]


def remembered(db):
    """What the app wrote to <db>-notified: {key: (id, server)}, later lines
    winning; server names the server instance that issued the id."""
    out = {}
    try:
        with open(db + "-notified", encoding="utf-8") as f:
            for line in f:
                try:
                    key, nid, server = json.loads(line)
                except ValueError:
                    continue  # a torn last line
                out[key] = (nid, server)
    except FileNotFoundError:
        pass
    return out


def recorded(db, key, nid):
    """The delivery of `key` is recorded and the app wrote down its id with
    the server that issued it."""
    c = sqlite3.connect(db)
    try:
        row = c.execute("SELECT state FROM instances WHERE key = ?", (key,)).fetchone()
    finally:
        c.close()
    nid_, server = remembered(db).get(key, (None, ""))
    return row == ("delivered",) and nid_ == nid and server != ""


def rewind_to_in_flight(db, key):
    """Database and journal as a SIGKILL during `key`'s delivery leaves
    them. The app must not be running."""
    c = sqlite3.connect(db)
    try:
        with c:
            (iid, state), = c.execute("SELECT id, state FROM instances WHERE key = ?", (key,))
            assert state == "delivered", state
            c.execute("DELETE FROM deliveries WHERE instance_id = ?", (iid,))
            c.execute("UPDATE instances SET state = 'firing' WHERE id = ?", (iid,))
    finally:
        c.close()
    # The group commit emptied the journal; in flight, it holds the attempt
    # begun and not ended. Written whole ("w"): a leftover "d" line from a
    # kill just before the emptying would say it was delivered.
    with open(db + "-fired", "w", encoding="utf-8") as f:
        f.write(json.dumps(["b", key, "desktop"], separators=(",", ":")) + "\n")


def open_notes(records, open_ids, summary):
    """Ids open on the server whose latest Notify was for `summary`."""
    latest = {}
    for r in records:
        if r.get("call") == "Notify":
            latest[r["id"]] = r["summary"]
    return sorted(i for i in open_ids if latest.get(i) == summary)
