#!/usr/bin/env python3
"""Writes 8puzzle100.txt: 100 random solvable 8-puzzles (blank-last goal) with their
optimal lengths from a plain breadth-first search, independent of puzzled's code.
Seeded, so it regenerates the same file: python3 gen_8puzzle.py > 8puzzle100.txt"""
import random
from collections import deque

GOAL = (1, 2, 3, 4, 5, 6, 7, 8, 0)

def neighbours(state):
    b = state.index(0)
    r, c = divmod(b, 3)
    for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1)):
        rr, cc = r + dr, c + dc
        if 0 <= rr < 3 and 0 <= cc < 3:
            s = list(state)
            t = rr * 3 + cc
            s[b], s[t] = s[t], s[b]
            yield tuple(s)

dist = {GOAL: 0}
queue = deque([GOAL])
while queue:
    s = queue.popleft()
    for n in neighbours(s):
        if n not in dist:
            dist[n] = dist[s] + 1
            queue.append(n)
assert len(dist) == 181440

rng = random.Random(8)
states = sorted(dist)
picks = rng.sample(states, 98) + [(8, 6, 7, 2, 5, 4, 3, 0, 1), (6, 4, 7, 8, 5, 0, 3, 2, 1)]
print("# 100 random solvable 8-puzzles, blank-last goal 1 2 3 4 5 6 7 8 0, with optimal lengths")
print("# from breadth-first search (gen_8puzzle.py, seed 8); the last two are the only 31-move states.")
print("# Format: id t0 ... t8 optimal_length")
for i, s in enumerate(picks, 1):
    print(i, " ".join(map(str, s)), dist[s])
