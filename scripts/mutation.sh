#!/usr/bin/env bash
# Mutation testing of the core modules (utils/attention, transformer, translation, positional, rnn) with
# mutmut, configured in pyproject.toml ([tool.mutmut]: which files are mutated, which fast unit tests
# run). The reviewed results, and why each remaining survivor is left, are in scripts/mutation.md.
#
#   bash scripts/mutation.sh [MAX_CHILDREN]    # default: one mutant process per CPU; 1 on a busy machine
#
# Needs mutmut (pip install -r requirements-dev.txt) on PATH or in .venv/bin. Prints `mutmut results`
# (every mutant that was not killed), a count per module and the mutation score, and exits 1 if a mutant
# survives that scripts/mutation.md does not list: a test to write, or an equivalence to explain there.
set -euo pipefail
cd "$(dirname "$0")/.."

bin=""
if ! command -v mutmut >/dev/null 2>&1; then
    if [ -x .venv/bin/mutmut ]; then
        bin=".venv/bin/"
    else
        echo "mutmut is not installed: pip install -r requirements-dev.txt" >&2
        exit 2
    fi
fi
children="${1:-$(nproc)}"
# Tiny tensors and several mutant processes at once: one thread each is fastest and never oversubscribes.
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1

rm -rf mutants  # a fresh run: mutmut keeps old verdicts, which a changed test suite may have made stale
start=$(date +%s)
"${bin}mutmut" run --max-children "$children"
echo
echo "mutmut run took $(( $(date +%s) - start )) s with --max-children $children"
echo
echo "== mutmut results (mutants not killed) =="
"${bin}mutmut" results
"${bin}mutmut" results --all true > mutants/all-results.txt

"${bin}python3" - mutants/all-results.txt scripts/mutation.md <<'EOF'
"""Count the verdicts per module, and compare the survivors with the ones scripts/mutation.md explains."""
import collections
import re
import sys

results, notes = sys.argv[1], sys.argv[2]
verdicts = [line.strip().rsplit(": ", 1) for line in open(results, encoding="utf-8") if "__mutmut_" in line]
counts = collections.defaultdict(collections.Counter)
for name, status in verdicts:
    counts[".".join(name.split(".")[:2])][status] += 1  # utils.attention.x_f__mutmut_3 -> utils.attention
statuses = sorted({s for c in counts.values() for s in c})
print("\n== verdicts per module ==")
print(f"{'module':24}{'mutants':>9}" + "".join(f"{s:>12}" for s in statuses))
total = collections.Counter()
for module in sorted(counts):
    total.update(counts[module])
    print(f"{module:24}{sum(counts[module].values()):>9}" + "".join(f"{counts[module][s]:>12}" for s in statuses))
print(f"{'all':24}{sum(total.values()):>9}" + "".join(f"{total[s]:>12}" for s in statuses))
tested = total["killed"] + total["survived"] + total["timeout"] + total["suspicious"]
print(f"mutation score: killed {total['killed']} of {tested} tested mutants = {total['killed'] / max(tested, 1):.1%}")

explained = set(re.findall(r"`([\w.ǁ]+__mutmut_\d+)`", open(notes, encoding="utf-8").read()))
new = sorted(name for name, status in verdicts if status == "survived" and name not in explained)
if new:
    print(f"\n{len(new)} surviving mutant(s) not explained in {notes}: kill each with a test, or explain it "
          f"there (`mutmut show NAME` prints the change):")
    print("\n".join(f"    {name}" for name in new))
    sys.exit(1)
print(f"every surviving mutant is explained in {notes}")
EOF
