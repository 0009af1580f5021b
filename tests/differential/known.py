"""Accepted divergence classes: narrow predicates, each documented in known_divergences.md.

classify(divergence, case_meta, ics_path, args) returns the id of the first class whose
predicate accepts the divergence, else None. Every id here must have a `## ID` section
in known_divergences.md (checked at import), which names the RFC 5545 clause that says
which side is right.
"""
import re
from pathlib import Path

DOC = Path(__file__).resolve().parent / "known_divergences.md"
CLASSES = []          # (id, predicate)


def divergence_class(cid):
    def register(fn):
        CLASSES.append((cid, fn))
        return fn
    return register


def classify(d, meta, path, args):
    if meta is None:
        return None
    for cid, fn in CLASSES:
        if fn(d, meta, path, args):
            return cid
    return None


def _check_documented():
    documented = set(re.findall(r"^## (KD-\d+)\b", DOC.read_text(), re.M)) if DOC.exists() else set()
    missing = [cid for cid, _ in CLASSES if cid not in documented]
    if missing:
        raise SystemExit(f"known.py: classes not documented in {DOC.name}: {missing}")


_check_documented()
