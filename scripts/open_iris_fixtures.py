#!/usr/bin/env python3
"""Templates serialized by open-iris itself, with open-iris's own decisions, for Argus's tests.

Writes one JSON file (default crates/iris/tests/data/open-iris-decisions.json):

  {"open_iris": VERSION, "threshold": 0.345, "rotation_shift": 15,
   "enrolled": [{"left": SERIALIZED, "right": SERIALIZED}, ...],
   "queries":  [{"left": ..., "right": ..., "kind": "genuine|tie|impostor|one-eye", "matches": [i, ...],
                 "fhd": [[left, right] per enrolled i in "matches" or near the threshold]}, ...]}

where SERIALIZED is `IrisTemplate.serialize()` (open-iris 1.x: packed base64 arrays and
iris_code_version) and "matches" lists every enrolled identity that open-iris's
`SimpleHammingDistanceMatcher(rotation_shift=15)` puts below the threshold on both eyes.

The codes are synthetic (no iris images ship with open-iris): random bits with eyelid-like mask
bands, genuine re-captures rotated within ±15 columns with their distance drawn near 0.345, some
exactly at it (hd/ml = 69/200), impostors, and queries with one genuine eye only.

Usage (open-iris from PyPI):  python3 -m venv v && v/bin/pip install open-iris && \
    v/bin/python scripts/open_iris_fixtures.py [OUT.json]
"""
import json
import sys

import numpy as np
from iris import IrisTemplate, SimpleHammingDistanceMatcher, __version__

ROWS, COLS, FILTERS, PARTS = 16, 256, 2, 2
THRESHOLD, SHIFT = 0.345, 15
N_ENROLLED, N_QUERIES = 100, 100
rng = np.random.default_rng(20261129)


def mask():
    """Valid bits with an occluded band at the top and the bottom rows, and a few specks."""
    m = np.ones((ROWS, COLS, FILTERS, PARTS), dtype=bool)
    top, bottom = rng.integers(0, 4), rng.integers(0, 3)
    m[:top, rng.integers(0, COLS // 2):, :, :] = False
    if bottom:
        m[-bottom:, : rng.integers(COLS // 4, COLS), :, :] = False
    m &= rng.random(m.shape) > 0.02
    return m


def eye():
    return rng.random((ROWS, COLS, FILTERS, PARTS)) < 0.5, mask()


def recapture(code, m, target=None, exact=False):
    """The eye rotated by a random shift within the window, its own occlusion, and bits flipped so
    that hd/ml at that shift is `target` (drawn near the threshold when not given)."""
    shift = int(rng.integers(-SHIFT, SHIFT + 1))
    c, m = np.roll(code, shift, axis=1), np.roll(m, shift, axis=1) & mask()
    valid = np.flatnonzero(m)
    if exact:  # ml a multiple of 200, hd = 0.345·ml exactly
        keep = valid[: len(valid) // 200 * 200]
        drop = np.setdiff1d(valid, keep)
        m.flat[drop] = False
        valid, target = keep, THRESHOLD
    if target is None:
        target = rng.uniform(0.325, 0.365)
    flips = int(round(target * len(valid))) if not exact else len(valid) * 69 // 200
    c = c.copy()
    c.flat[rng.choice(valid, flips, replace=False)] ^= True
    return c, m


def template(code, m):
    codes = [code[:, :, f, :] for f in range(FILTERS)]
    masks = [m[:, :, f, :] for f in range(FILTERS)]
    return IrisTemplate(iris_codes=codes, mask_codes=masks, iris_code_version="v2.1")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "crates/iris/tests/data/open-iris-decisions.json"
    enrolled = [(eye(), eye()) for _ in range(N_ENROLLED)]
    queries = []
    for k in range(N_QUERIES):
        i = int(rng.integers(N_ENROLLED))
        (lc, lm), (rc, rm) = enrolled[i]
        if k % 10 < 5:
            kind, q = "genuine", (recapture(lc, lm), recapture(rc, rm))
        elif k % 10 < 7:
            kind, q = "tie", (recapture(lc, lm, exact=True), recapture(rc, rm, target=0.30))
        elif k % 10 < 9:
            kind, q = "one-eye", (recapture(lc, lm, target=0.30), eye())
        else:
            kind, q = "impostor", (eye(), eye())
        queries.append((kind, q))

    matcher = SimpleHammingDistanceMatcher(rotation_shift=SHIFT)
    gallery = [(template(*l), template(*r)) for l, r in enrolled]
    doc = {"open_iris": __version__, "threshold": THRESHOLD, "rotation_shift": SHIFT, "enrolled": [], "queries": []}
    doc["enrolled"] = [{"left": l.serialize(), "right": r.serialize()} for l, r in gallery]
    for kind, (l, r) in queries:
        probe = (template(*l), template(*r))
        matches, fhd = [], {}
        for i, (gl, gr) in enumerate(gallery):
            dl, dr = matcher.run(probe[0], gl), matcher.run(probe[1], gr)
            if dl < THRESHOLD and dr < THRESHOLD:
                matches.append(i)
            if min(dl, dr) < 0.4:
                fhd[i] = [dl, dr]
        doc["queries"].append(
            {"left": probe[0].serialize(), "right": probe[1].serialize(), "kind": kind, "matches": matches, "fhd": fhd}
        )
    with open(out, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
    kinds = {}
    for q in doc["queries"]:
        kinds.setdefault(q["kind"], [0, 0])[bool(q["matches"])] += 1
    print(f"wrote {out}: {N_ENROLLED} enrolled, {N_QUERIES} queries; [unmatched, matched] by kind: {kinds}")


if __name__ == "__main__":
    main()
