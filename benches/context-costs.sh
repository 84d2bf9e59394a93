#!/usr/bin/env bash
# Regenerates the context-cost tables of docs/context-costs.md: every session of the corpus
# replayed by `cairn context replay` at 16k, 32k and 128k windows, and the corpus's working days
# (../shared/bench/workdays.py: 8 tasks one after another in one conversation) at 128k and 200k,
# every request dumped, then priced next to every peer policy by ../shared/bench/price_dumps.py
# (costsim.py's token and cache model for everybody) — for the whole corpus and for each of its
# folders (its sources) on their own, so a change can be seen to help on each half.
#
# Summaries (every auxiliary call a live session makes, each reply exactly as long as asked):
# SUMMARIES=scripted (the default) writes them in the replay (`--summaries scripted`);
# SUMMARIES=http sends them over HTTP to a summariser server — the mock LLM's `--summarise`
# (examples/mock_llm.rs), which answers as the scripted summariser does, speaks the Anthropic
# Messages streaming wire, reports usage from its prompt cache and refuses what the API refuses
# — through `--summaries model`, the path a replay with a real provider takes.
#
#   benches/context-costs.sh [DUMPS_DIR]      (default: target/context-costs)
#
# Environment: CAIRN_CORPUS (default ../shared/corpus), CAIRN_BENCH (default ../shared/bench),
# WINDOWS (default "16000 32000 128000"), DAY_WINDOWS (default "128000 200000"), DAYS_SEED
# (workdays.py's --seed, default its own), JOBS (default 2), CAIRN (a built binary; default:
# `cargo build --release` and target/release/cairn), SUMMARIES (scripted | http), MOCK (the
# built mock_llm example for SUMMARIES=http; default: built with `cargo build --release`).
set -euo pipefail
cd "$(dirname "$0")/.."
corpus=$(realpath "${CAIRN_CORPUS:-../shared/corpus}")
bench=$(realpath "${CAIRN_BENCH:-../shared/bench}")
dumps=$(realpath -m "${1:-target/context-costs}")
windows=${WINDOWS:-16000 32000 128000}
day_windows=${DAY_WINDOWS:-128000 200000}
jobs=${JOBS:-2}
summaries=${SUMMARIES:-scripted}
if [ -z "${CAIRN:-}" ]; then
  cargo build --release --quiet
  CAIRN=$(realpath target/release/cairn)
fi
# A private home: no user config changes the defaults being measured.
home=$(mktemp -d)
server=""
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; fi
  rm -rf "$home"
}
trap cleanup EXIT
export CAIRN CAIRN_HOME="$home"
mkdir -p "$dumps"
case "$summaries" in
  scripted) replay_summaries=scripted ;;
  http)
    if [ -z "${MOCK:-}" ]; then
      cargo build --release --quiet --example mock_llm
      MOCK=$(realpath target/release/examples/mock_llm)
    fi
    "$MOCK" --summarise >"$dumps/summariser.log" 2>&1 &
    server=$!
    for _ in $(seq 100); do
      url=$(sed -n 's/^  ANTHROPIC_BASE_URL=//p' "$dumps/summariser.log")
      [ -n "$url" ] && break
      sleep 0.1
    done
    [ -n "$url" ] || { echo "the summariser did not start: $(cat "$dumps/summariser.log")" >&2; exit 1; }
    export ANTHROPIC_BASE_URL="$url" ANTHROPIC_API_KEY=bench
    replay_summaries=model
    ;;
  *) echo "SUMMARIES must be scripted or http, not $summaries" >&2; exit 2 ;;
esac
export REPLAY_SUMMARIES=$replay_summaries

# replay_all SESSIONS_DIR OUT_DIR WINDOW: replay every session, dump it, price it (all of it,
# then each folder of SESSIONS_DIR on its own).
replay_all() {
  local sessions=$1 out=$2 w=$3
  rm -rf "${out:?}/$w"
  find "$sessions" -name '*.jsonl' | sort | S=$sessions O=$out W=$w xargs -P "$jobs" -I{} sh -c '
    f="$1"; rel=${f#"$S"/}; rel=${rel%.jsonl}
    mkdir -p "$O/$W/$rel"
    "$CAIRN" context replay "$f" --window "$W" --summaries "$REPLAY_SUMMARIES" --json --dump "$O/$W/$rel" \
      </dev/null >"$O/$W/$rel.json" || echo "replay failed: $rel at $W" >&2
  ' sh {}
  python3 "$bench/price_dumps.py" --corpus "$sessions" --dumps "$out/$w" --window "$w" --json >"$out/price-$w.json"
  for part in "$sessions"/*/; do
    part=$(basename "$part")
    python3 "$bench/price_dumps.py" --corpus "$sessions/$part" --dumps "$out/$w/$part" --window "$w" --json \
      >"$out/price-$w-$part.json"
  done
}

for w in $windows; do replay_all "$corpus" "$dumps/tasks" "$w"; done
if [ -n "$day_windows" ]; then
  rm -rf "$dumps/days-src"
  python3 "$bench/workdays.py" "$corpus" "$dumps/days-src" ${DAYS_SEED:+--seed "$DAYS_SEED"} >/dev/null
  for w in $day_windows; do replay_all "$dumps/days-src" "$dumps/days" "$w"; done
fi
if [ -n "$server" ]; then
  problems=$(grep -c '^   problem: ' "$dumps/summariser.log" || true)
  echo "summaries over HTTP: $(grep -c '^#' "$dumps/summariser.log" || true) calls, $problems refused or flagged by the strict mock (log: $dumps/summariser.log)"
  echo
fi

python3 - "$dumps" "$windows" "$day_windows" <<'PY'
import json, sys, glob, os
dumps, windows, day_windows = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
runs = [("tasks", w) for w in windows] + [("days", w) for w in day_windows]
print("| sessions | window | cairn | best peer | cairn ÷ best | evidence recall cairn / best | cairn ÷ none |")
print("|---|---|---:|---:|---:|---|---:|")
for kind, w in runs:
    p = json.load(open(os.path.join(dumps, kind, f"price-{w}.json")))
    pol, best = p["policies"], p["best_peer"]
    what = f"{p['sessions']} single tasks" if kind == "tasks" else f"{p['sessions']} workdays"
    print(f"| {what} | {int(w)//1000}k | ${pol['cairn']['input_usd']:.2f} | {best} ${pol[best]['input_usd']:.2f} "
          f"| **{p['cairn_vs_best']:.3f}** | {pol['cairn']['recall']:.3f} / {pol[best]['recall']:.3f} "
          f"| {p['cairn_vs_none']:.3f} |")
print()
names = list(json.load(open(os.path.join(dumps, runs[0][0], f"price-{runs[0][1]}.json")))["policies"])
print("| sessions | window | " + " | ".join(names) + " |")
print("|---|---|" + "---:|" * len(names))
for kind, w in runs:
    pol = json.load(open(os.path.join(dumps, kind, f"price-{w}.json")))["policies"]
    cells = [f"{pol[n]['input_usd']:.2f}" + (f" ({pol[n]['failed']} failed)" if pol[n]["failed"] else "") for n in names]
    print(f"| {kind} | {int(w)//1000}k | " + " | ".join(cells) + " |")
print()
print("| sessions | part | window | cairn | best peer | cairn ÷ best | evidence recall cairn / best | cairn ÷ none |")
print("|---|---|---|---:|---:|---:|---|---:|")
for kind, w in runs:
    for f in sorted(glob.glob(os.path.join(dumps, kind, f"price-{w}-*.json"))):
        part = os.path.basename(f)[len(f"price-{w}-"):-len(".json")]
        p = json.load(open(f))
        pol, best = p["policies"], p["best_peer"]
        print(f"| {kind} | {part} ({p['sessions']}) | {int(w)//1000}k | ${pol['cairn']['input_usd']:.2f} | {best} ${pol[best]['input_usd']:.2f} "
              f"| **{p['cairn_vs_best']:.3f}** | {pol['cairn']['recall']:.3f} / {pol[best]['recall']:.3f} | {p['cairn_vs_none']:.3f} |")
print()
for kind, w in runs:
    reports = [json.load(open(f)) for f in glob.glob(os.path.join(dumps, kind, w, "**", "*.json"), recursive=True)]
    t = lambda k: sum(r["totals"][k] for r in reports)
    over = sum(1 for r in reports for q in r["requests"] if q["tokens"] > int(w))
    print(f"- {kind} {int(w)//1000}k: {len(reports)} sessions, {t('requests')} requests, {over} over the window, "
          f"{t('violations')} invalid; {t('compactions')} compactions, {t('aux_requests')} auxiliary calls, "
          f"{t('compaction_failures')} failed, {t('pruned_results')} pruned results, "
          f"{t('dedup_replacements')} dedup replacements, {t('trimmed_messages')} trimmed messages")
PY
