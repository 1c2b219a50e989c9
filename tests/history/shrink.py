"""Shrinking: cuts a failing history down to a small one that still fails
the same way (same failure signature), within a time budget.

1. delta debugging over the operations (drop halves, quarters, ... ones);
2. drop the jobs no remaining operation names (each is drained at the end);
3. halve every produce operation's record count while it still fails;
4. shorten waits and outages.
Every candidate is a complete history run from scratch on fresh topics and
databases, so a candidate that fails differently is simply not taken.
"""
import copy
import time


def shrink(h, still_fails, budget):
    end = time.monotonic() + budget
    best = copy.deepcopy(h)

    def left():
        return time.monotonic() < end

    def attempt(ops=None, jobs=None):
        nonlocal best
        cand = copy.deepcopy(best)
        if ops is not None:
            cand["ops"] = ops
        if jobs is not None:
            cand["jobs"] = jobs
        if still_fails(cand):
            best = cand
            return True
        return False

    # 1. ddmin over the operations.
    n = 2
    while left() and len(best["ops"]) >= 1:
        ops = best["ops"]
        size = max(1, (len(ops) + n - 1) // n)
        chunks = [ops[i:i + size] for i in range(0, len(ops), size)]
        done = False
        for i in range(len(chunks)):
            if not left():
                break
            rest = [op for j, c in enumerate(chunks) if j != i for op in c]
            if attempt(ops=rest):
                n = max(n - 1, 2)
                done = True
                break
        if not done:
            if size == 1:
                break
            n = min(len(ops), n * 2)

    # 2. Jobs that no operation names.
    for j in list(best["jobs"]):
        if not left():
            break
        named = any(j["id"] in (op.get("job"), op.get("holder"), (op.get("inst") or "").split("#")[0],
                                (op.get("job") or "").replace("live:", ""))
                    for op in best["ops"]) or any(
                        x.get("name") == "case_of:" + j["id"] for x in best["jobs"])
        if not named and len(best["jobs"]) > 1:
            attempt(jobs=[x for x in best["jobs"] if x["id"] != j["id"]])

    # 3. Less data.
    for i in range(len(best["ops"])):
        while left() and best["ops"][i]["op"] == "produce" and best["ops"][i]["n"] > 1:
            ops = copy.deepcopy(best["ops"])
            ops[i]["n"] //= 2
            if not attempt(ops=ops):
                break

    # 4. Shorter waits and outages.
    for i in range(len(best["ops"])):
        if left() and best["ops"][i].get("ms", 0) > 100:
            ops = copy.deepcopy(best["ops"])
            ops[i]["ms"] = 100
            attempt(ops=ops)
    return best
