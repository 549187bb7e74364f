"""The collision sample's usual case (arena_gym.sensors.contact) as one compiled pass.

`all_clear` reads every env's contact-count rings straight from the batch's history rows and
says whether no physics step inside any env's window had more contacts than feet on the
ground: CollisionUnit._counts and the window test of CollisionUnit._compute for every env
with one counter layout, fused into one loop (a dozen numpy calls otherwise, each slow on
the caches MuJoCo's step leaves cold). Whenever it cannot say "all clear" (a contact over
the ground count inside a window, or a lockstep window longer than the slots read) it
answers False and changes nothing: the numpy path then decides, as it always did; a test
pins the two equal.
"""

from __future__ import annotations

import numpy as np

from arena_gym.jit import numba


@numba.njit(cache=True)
def all_clear(history: np.ndarray, time: np.ndarray, since: np.ndarray, everything: int,
              feet: np.ndarray, slots: int, ring: int, sampled: bool) -> bool:
    """Whether no env's window since[e] <= stamp < time[e] holds a physics step with more
    contacts than feet-on-ground ones, read from each env's rings (history (n, L) rows;
    `everything`: the all-contacts ring's address, `feet`: each foot's ring's; a ring of
    `ring` slots: two header slots, the second the cursor, then the stamps, then the
    values). In lockstep (every env's cursor the same, and every window started: `since`
    finite, or `sampled`, every env sampled before) only the newest min(slots, ring) slots
    are read, and the answer is False unless the oldest of them is older than every window
    (or the whole ring is read); otherwise every slot is read. When True it also starts the
    next windows: since[:] = time; when False `since` is untouched."""
    n = history.shape[0]
    if n == 0:
        return False
    head = history[0, everything + 1]
    lockstep = True
    for e in range(n):
        if history[e, everything + 1] != head or not (sampled or np.isfinite(since[e])):
            lockstep = False
    cursor = int(head)
    if lockstep and not 0 <= cursor < ring:
        return False  # not a ring's cursor: the numpy path decides
    k = min(slots, ring) if lockstep else ring
    stamps = everything + 2
    values = everything + 2 + ring
    for e in range(n):
        start, end = since[e], time[e]
        for j in range(k):
            slot = cursor - j if lockstep else j  # newest first; else all, in any order
            if slot < 0:
                slot += ring
            stamp = history[e, stamps + slot]
            if start <= stamp and stamp < end:  # in the window: is it over the feet's?
                ground = 0.0
                for f in range(feet.shape[0]):
                    ground += history[e, feet[f] + 2 + ring + slot]
                if history[e, values + slot] > ground:
                    return False  # a collision, or feet on a slab: the contact list decides
        oldest = cursor - k + 1
        if oldest < 0:
            oldest += ring
        if k < ring and not history[e, stamps + oldest] < start:
            return False  # the window may reach past the slots read
    for e in range(n):
        since[e] = time[e]
    return True
