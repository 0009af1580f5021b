"""Reading /proc: a process's stat line and its descendants. Shared by
tests/e2e/app_test.py and scripts/bench_app.py; standard library only."""

import os


def proc_stat(pid):
    """(comm, ppid, utime+stime ticks, starttime) or None if gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            s = f.read()
    except OSError:
        return None
    comm = s[s.index("(") + 1 : s.rindex(")")]
    rest = s[s.rindex(")") + 2 :].split()
    # rest[0] is field 3 (state): ppid = field 4, utime 14, stime 15, starttime 22
    return comm, int(rest[1]), int(rest[11]) + int(rest[12]), int(rest[19])


def descendants(root):
    """PIDs of root and everything below it."""
    children = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            st = proc_stat(int(d))
            if st:
                children.setdefault(st[1], []).append(int(d))
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out
