#!/usr/bin/env bash
# Records a real agent run, replays it with zero model calls, shows a divergence, forks it
# with an edited answer, diffs the fork against the origin, and checks every claim on the
# way: the script exits non-zero, naming the claim, when one fails.
#
# Parts: tapedeck (the built CLI, on a fresh embedded store in a temporary directory), a
# scripted stand-in model server (stand-in-model.mjs), and a weather agent on the official
# OpenAI SDK instrumented by @opentelemetry/instrumentation-openai (agent.mjs).
#
#   npm run build && examples/replay/run.sh
#
# TAPEDECK_CLI names another build of the CLI to run (the test that breaks replay on purpose).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cli="${TAPEDECK_CLI:-$root/dist/src/cli/main.js}"
work="$(mktemp -d "${TMPDIR:-/tmp}/tapedeck-demo.XXXXXX")"
pids=()
proved=0

cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

fail() {
  echo "FAIL: $1" >&2
  [ -n "${2:-}" ] && echo "      $2" >&2
  echo "(tapedeck's log: see above; the demo stopped at the first claim that did not hold)" >&2
  exit 1
}
claim() { # claim "what is claimed" <test command...>
  local what="$1"
  shift
  if "$@"; then
    proved=$((proved + 1))
    echo "ok   $what"
  else
    fail "$what" "${detail:-}"
  fi
}
json() { node -e "const v=JSON.parse(require('fs').readFileSync(0,'utf8')); const r=($1); process.stdout.write(typeof r==='string'?r:JSON.stringify(r))"; }
wait_for_line() { # file pattern
  for _ in $(seq 1 900); do
    grep -q "$2" "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "timed out waiting for '$2' in $1:" >&2
  cat "$1" >&2
  return 1
}

[ -f "$cli" ] || fail "the tapedeck CLI is built" "no $cli: run npm run build"

# --- the stand-in model, then tapedeck with the stand-in as its OpenAI upstream -----------
node "$here/stand-in-model.mjs" >"$work/stand-in.out" &
pids+=($!)
standin_pid=$!
wait_for_line "$work/stand-in.out" '^listening'
standin_port="$(sed -n 's/^listening //p' "$work/stand-in.out")"
standin="http://127.0.0.1:$standin_port"
stand_in_requests() { curl -s "$standin/_stand-in/requests" | json 'v.requests'; }

node "$cli" serve --data-dir "$work/data" --http-port 0 --grpc-port 0 \
  --upstream-openai "$standin/v1" >"$work/tapedeck.out" 2>"$work/tapedeck.log" &
pids+=($!)
wait_for_line "$work/tapedeck.out" 'API  *http' || { cat "$work/tapedeck.log" >&2; exit 1; }
td="$(sed -n 's#^  API *\(http://[^/]*\)/v1/runs.*#\1#p' "$work/tapedeck.out")"
echo "tapedeck at $td, stand-in model at $standin, data in $work/data"

# --- 1. record ------------------------------------------------------------------------------
run=demo-weather
recorded="$(AGENT_RUN=$run TAPEDECK_URL=$td OPENAI_BASE_URL="$standin/v1" node "$here/agent.mjs")" ||
  fail "the agent runs against the stand-in model" "$recorded"
answer="$(echo "$recorded" | json 'v.answer')"
echo "recorded: $answer"
detail="stand-in saw $(stand_in_requests) requests"
claim "the agent made two model calls (a tool call, then the answer) to the stand-in" test "$(stand_in_requests)" = 2
tape="$(curl -s "$td/v1/tapes/$run")"
detail="$tape"
claim "tapedeck recorded the run as a tape of two model steps" \
  test "$(echo "$tape" | json 'v.steps.filter(s=>s.kind==="llm").length')" = 2
answer_step="$(echo "$tape" | json 'v.steps.filter(s=>s.kind==="llm")[1].index')"

# --- 2. replay with the stand-in stopped: zero model calls ----------------------------------
kill "$standin_pid"
wait "$standin_pid" 2>/dev/null || true
detail=""
claim "the stand-in model is stopped" bash -c "! curl -s -o /dev/null '$standin/_stand-in/requests'"
replay="$(curl -s -X POST -H 'content-type: application/json' "$td/v1/replays" -d "{\"run\":\"$run\"}")"
replay_id="$(echo "$replay" | json 'v.id')"
replayed="$(OPENAI_BASE_URL="$(echo "$replay" | json "new URL(v.base_urls.openai, '$td').href")" node "$here/agent.mjs")" || true
detail="recorded: $recorded; replayed: $replayed"
claim "the replay answers the agent exactly as recorded, through the official SDK" \
  test "$(echo "$replayed" | json 'v.answer')" = "$answer"
status="$(curl -s "$td/v1/replays/$replay_id")"
detail="$status"
claim "the replay served both model steps, each matching the recorded request" \
  test "$(echo "$status" | json '[v.served, v.remaining, v.calls.every(c=>c.matched)].join()')" = "2,0,true"

# --- 3. a changed system prompt diverges -----------------------------------------------------
replay2="$(curl -s -X POST -H 'content-type: application/json' "$td/v1/replays" -d "{\"run\":\"$run\"}")"
diverged="$(AGENT_SYSTEM='You are a pirate. Answer in rhyme.' \
  OPENAI_BASE_URL="$(echo "$replay2" | json "new URL(v.base_urls.openai, '$td').href")" node "$here/agent.mjs")" || true
detail="$diverged"
claim "a changed system prompt is refused with 409 replay_divergence at step 0" \
  test "$(echo "$diverged" | json '[v.error&&v.error.status, v.error&&v.error.type, v.error&&v.error.step].join()')" = "409,replay_divergence,0"

# --- 4. fork at the answer step with an edited answer; the stand-in is the upstream ---------
node "$here/stand-in-model.mjs" "$standin_port" >"$work/stand-in-2.out" &
pids+=($!)
wait_for_line "$work/stand-in-2.out" '^listening'
edited='{"role":"assistant","tool_calls":[{"id":"call_edited","name":"get_weather","arguments":{"city":"Lyon"}}]}'
fork="$(curl -s -X POST -H 'content-type: application/json' "$td/v1/replays" -d "{\"run\":\"$run\",\"fork\":{\"at_step\":$answer_step,\"answer\":$edited}}")"
fork_run="$(echo "$fork" | json 'v.fork.run')"
forked="$(OPENAI_BASE_URL="$(echo "$fork" | json "new URL(v.base_urls.openai, '$td').href")" node "$here/agent.mjs")" || true
echo "forked:   $(echo "$forked" | json 'v.answer || JSON.stringify(v)')"
detail="$forked"
claim "the fork answered the edited tool call, then the stand-in answered live about Lyon" \
  test "$(echo "$forked" | json '[v.calls, /Lyon/.test(v.answer)].join()')" = "3,true"
detail="stand-in saw $(stand_in_requests) requests"
claim "only the call after the fork's step reached the stand-in" test "$(stand_in_requests)" = 1
forks="$(curl -s "$td/v1/runs/$run/forks")"
detail="$forks"
claim "the fork is recorded as a new run, listed among the run's forks at step $answer_step" \
  test "$(echo "$forks" | json "v.forks.some(f=>f.run==='$fork_run' && f.at_step===$answer_step && f.spans===3)")" = true

# --- 5. diff the fork against the origin -------------------------------------------------------
diff="$(curl -s "$td/v1/diff?a=$run&b=$fork_run")"
detail="$diff"
claim "the diff aligns the fork's first two calls with the origin's steps 0 and 1, and its live call as new" \
  test "$(echo "$diff" | json 'v.aligned.map(p=>[p.a,p.b].join("/")).join()')" = "0/0,1/1,/2"
claim "the diff names where the fork parted from the origin" test "$(echo "$diff" | json 'v.first_divergence!==null')" = true
echo "diff:     $(echo "$diff" | json 'v.first_divergence.explanation')"

echo
echo "proved $proved claims: recorded a real instrumented agent, replayed it with zero model calls,"
echo "refused a changed prompt at step 0, forked it with an edited answer going live, and diffed the fork."
