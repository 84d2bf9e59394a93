#!/usr/bin/env bash
# Regenerates the context-cost table of docs/context-costs.md: every session of the corpus
# replayed by `cairn context replay` at 16k, 32k and 128k windows with scripted summaries
# (replies exactly as long as asked: the size the peers' summaries are priced at), every
# request dumped, then priced next to the peer policies by ../shared/bench/price_dumps.py
# (costsim.py's token and cache model for everybody).
#
#   benches/context-costs.sh [DUMPS_DIR]      (default: target/context-costs)
#
# Environment: CAIRN_CORPUS (default ../shared/corpus), CAIRN_BENCH (default ../shared/bench),
# WINDOWS (default "16000 32000 128000"), JOBS (default 2), CAIRN (a built binary; default:
# `cargo build --release` and target/release/cairn).
set -euo pipefail
cd "$(dirname "$0")/.."
corpus=$(realpath "${CAIRN_CORPUS:-../shared/corpus}")
bench=$(realpath "${CAIRN_BENCH:-../shared/bench}")
dumps=$(realpath -m "${1:-target/context-costs}")
windows=${WINDOWS:-16000 32000 128000}
jobs=${JOBS:-2}
if [ -z "${CAIRN:-}" ]; then
  cargo build --release --quiet
  CAIRN=$(realpath target/release/cairn)
fi
# A private home: no user config changes the defaults being measured.
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
export CAIRN CAIRN_HOME="$home" corpus dumps
for w in $windows; do
  rm -rf "${dumps:?}/$w"
  find "$corpus" -name '*.jsonl' | sort | W=$w xargs -P "$jobs" -I{} sh -c '
    f="$1"; rel=${f#"$corpus"/}; rel=${rel%.jsonl}
    mkdir -p "$dumps/$W/$rel"
    "$CAIRN" context replay "$f" --window "$W" --summaries scripted --json --dump "$dumps/$W/$rel" \
      </dev/null >"$dumps/$W/$rel.json" || echo "replay failed: $rel at $W" >&2
  ' sh {}
  python3 "$bench/price_dumps.py" --corpus "$corpus" --dumps "$dumps/$w" --window "$w" --json >"$dumps/price-$w.json"
done
python3 - "$dumps" $windows <<'PY'
import json, sys, glob, os
dumps, windows = sys.argv[1], sys.argv[2:]
print("| window | policy | input $ | × hermes | × none | failed requests | read share |")
print("|---|---|---:|---:|---:|---:|---:|")
for w in windows:
    p = json.load(open(os.path.join(dumps, f"price-{w}.json")))
    pol = p["policies"]
    for name in ["cairn", "none", "trim", "hermes", "kosmokrator"]:
        v = pol[name]
        print(f"| {int(w)//1000}k | {name} | {v['input_usd']:.2f} | {v['input_usd']/pol['hermes']['input_usd']:.3f} "
              f"| {v['input_usd']/pol['none']['input_usd']:.3f} | {v['failed']} | {v['read_share']:.3f} |")
print()
for w in windows:
    reports = [json.load(open(f)) for f in glob.glob(os.path.join(dumps, w, "*", "*.json"))]
    t = lambda k: sum(r["totals"][k] for r in reports)
    over = sum(1 for r in reports for q in r["requests"] if q["tokens"] > int(w))
    print(f"- {int(w)//1000}k: {len(reports)} sessions, {t('requests')} requests, {over} over the window, "
          f"{t('violations')} invalid; {t('compactions')} compactions, {t('aux_requests')} auxiliary calls, "
          f"{t('pruned_results')} pruned results, {t('dedup_replacements')} dedup replacements, "
          f"{t('trimmed_messages')} trimmed messages")
PY
