"""Known open defects: the expectations the history checker does not hold yet.

Each entry names a combination that today's ktally gets wrong (an open
issue). While a name is in KNOWN_OPEN, the generator does not draw that
combination (or tolerates its outcome), so that histories on today's main
come out clean and the CI slice is green. When the fix lands, the lead
removes the entry here (and adds tests/history/mutants/NAME.patch, the fix
reverted, which `scripts/soak --mutant NAME` must catch): from then on the
checker draws the combination and holds ktally to it.

`scripts/soak --check NAME` (repeatable, or `--check all`) turns an entry
off for one run: the checker then draws the combination as if it were
fixed, which on today's main must find the defect.
"""

KNOWN_OPEN = {
    # name: the defect whose combination is held back.
    # Empty: every expectation the checker knows is held. The entries it
    # had are fixed; their mutants are in mutants/.
}
