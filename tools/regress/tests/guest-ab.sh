#!/usr/bin/env bash
# make test's guest case of the A/B harness (TAP): one boot, two FRAC devices, two
# comparisons by tools/regress/guest-regress.py, stored and compared by fracregress.
#
#   A/A: frac.ko against a copy of itself at another path, on frac0: the module is swapped
#        whenever the turn changes hands, as make regress swaps base and head. The harness
#        must not make a difference of nothing: no metric DIFFERENT and worse by 25% or more.
#        A side bias of 25% (one side always measured right after a module load, a device
#        that is not the one named) fails it; a smaller one does not, and the gate's own
#        false-alarm rate at 5% is not measured here (the host tests simulate it).
#   A/B: frac0 against frac2 (behind root port 00:11.0), whose completion-latency-ns is 100 us instead of 1 us:
#        P1.frac.p50_us must be a confirmed regression and the attribution must name end_irq
#        (device end -> interrupt, where the model adds that latency) first.
#
# Small on purpose (P1 and P2 only, 0.5 s slices, 6 to 8 a side, 6 traced): make regress is
# the real run.
# The verdicts are statistics, not timings: the injected effect is ~2x the QD1 round trip.
# Usage: tools/regress/tests/guest-ab.sh [OUTDIR]   (default results/regress-guest)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../.."
out=${1:-results/regress-guest}
rm -rf "$out"; mkdir -p "$out"
out=$(cd "$out" && pwd)
R=tools/regress/fracregress
db=$out/store.db

echo "1..4"
n=0 fails=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
nok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $*"; }

q=$(scripts/build-qemu.sh) || { echo "Bail out! no QEMU"; exit 1; }
cp kernel/frac.ko "$out/frac-copy.ko"
for t in aa inj; do
	head='"port": null' ko=$out/frac-copy.ko other='"0000:00:11.0"'
	[ $t = inj ] && head='"port": "0000:00:11.0"' ko=$PWD/kernel/frac.ko other=
	cat > "$out/spec-$t.json" <<EOF
{"out": "$t", "sides": [
  {"name": "base", "tree": "$PWD", "ko": "$PWD/kernel/frac.ko", "port": null},
  {"name": "head", "tree": "$PWD", "ko": "$ko", $head}],
 "other_ports": [$other], "slice_s": 0.5, "start": 6, "step": 2, "cap": 8,
 "seed": $((RANDOM + 1)), "magnitude": 0.10, "traced": 6, "traced_s": 1, "metrics": ["p1", "p2"]}
EOF
done

s=$(date +%s)
judges=()
trap 'kill "${judges[@]}" 2>/dev/null' EXIT
for t in aa inj; do	# the verdicts of each batch are made on the host (guest-regress.py)
	tools/regress/guest-regress.py --judge "$out/spec-$t.json" "$out/guest/$t" & judges+=($!)
done
if scripts/vm -q --qemu "$q" --out "$out/guest" --append nohz=off --timeout 1500 \
	--qemu-arg -device --qemu-arg pcie-root-port,id=rp2,chassis=3,slot=3,addr=0x11 \
	--qemu-arg -device --qemu-arg frac-npu,id=frac2,bus=rp2,completion-latency-ns=100000 \
	-- bash -c "tools/regress/guest-regress.py $out/spec-aa.json && tools/regress/guest-regress.py $out/spec-inj.json" \
	> "$out/guest.log" 2>&1; then
	kill "${judges[@]}" 2>/dev/null
	ok "one guest ran the A/A and the A/B comparison ($(( $(date +%s) - s )) s)"
else
	kill "${judges[@]}" 2>/dev/null
	nok "the guest run failed (log: $out/guest.log, console: $out/guest/console.log)"
	sed 's/^/# /' "$out/guest.log" | tail -n 20
	echo "Bail out! no results"
	exit 1
fi
sed 's/^/# /' "$out/guest.log"

compare() {	# compare NAME [device props]: stores both sides, writes NAME.json/.md; sets rc
	local t=$1 b h
	shift
	b=$($R --db "$db" import-raw "$out/guest/$t/base" --label "$t-base" | sed -n 's/.*: run //p')
	h=$($R --db "$db" import-raw "$out/guest/$t/head" --label "$t-head" "$@" | sed -n 's/.*: run //p')
	rc=0
	$R --db "$db" compare "$b" "$h" --threshold 0.25 --json "$out/$t.json" --md "$out/$t.md" \
		--fail-on-regression || rc=$?
}

compare aa
if [ "$rc" = 0 ]; then
	ok "A/A: no metric DIFFERENT and worse by 25% or more"
else
	nok "A/A: exit $rc (a regression between two identical devices)"
fi
grep -E '^ +[0-9].*(SAME|UNKNOWN|DIFFERENT)' "$out/aa.md" | sed 's/^/# A\/A /'

compare inj --device completion-latency-ns=100000
/usr/bin/python3 - "$out/inj.json" <<'EOF' || fails=$((fails + 1))
import json, sys
v = json.load(open(sys.argv[1]))
row = next((r for r in v["rows"] if r["metric"] == "P1.frac.p50_us"), None)
a = v.get("attribution") or {}
ok1 = row is not None and row["regression"]
print(("ok" if ok1 else "not ok") + " 3 - A/B: completion latency +99 us: P1.frac.p50_us a "
      "confirmed regression" + ("" if row is None else
      f" ({row['verdict']}, {row['change'] * 100:+.1f}%, p {row['p']:.2g})"))
named = a.get("named", [])
ok2 = named[:1] == ["end_irq"]
print(("ok" if ok2 else "not ok") + f" 4 - A/B: the attribution names end_irq first "
      f"(named {named}; test: {a.get('test')})")
for r in a.get("stages", []):
    print(f"# {r['stage']:11} {r['base_mean_ns'] / 1e3:8.2f} -> {r['new_mean_ns'] / 1e3:8.2f} us"
          f"  share {r['share'] * 100:4.0f}%  p {r['p']:.2g}")
sys.exit(0 if ok1 and ok2 else 1)
EOF
[ "$fails" = 0 ]
