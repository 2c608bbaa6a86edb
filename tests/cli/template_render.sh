#!/usr/bin/env bash
# End-to-end: `strata template` renders real chat templates to exactly the bytes Python Jinja2
# produced (testdata/chat-templates/cases), and reports template errors on stderr with a non-zero
# exit. Usage: template_render.sh <path-to-strata> <testdata-root>
set -euo pipefail
strata="$1"
data="$2/chat-templates"
if [[ ! -f "$data/cases/manifest.json" ]]; then
    echo "SKIP: test data missing: $data/cases/manifest.json"
    exit 0
fi
if ! command -v python3 > /dev/null; then
    echo "SKIP: python3 (used to assemble case variables) is not installed"
    exit 0
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Builds the variables of one case (README section 2): the conversation's context plus the
# template's per_template entry. add_generation_prompt is left to the command-line flag.
make_vars() {  # <template-stem> <conv> <out.json>
    python3 - "$data/cases/$2.json" "$1" > "$3" <<'PY'
import json, sys
conv = json.load(open(sys.argv[1], encoding="utf-8"))
variables = dict(conv["context"])
variables.update(conv["per_template"][sys.argv[2]])
json.dump(variables, sys.stdout, ensure_ascii=False)
PY
}

failures=0
render_case() {  # <template-stem> <conv> <gen>
    local stem="$1" conv="$2" gen="$3"
    local flag=() expected="$data/cases/${stem}__${conv}__gen${gen}"
    [[ "$gen" == 1 ]] && flag=(--add-generation-prompt)
    make_vars "$stem" "$conv" "$work/vars.json"
    if [[ -f "$expected.txt" ]]; then
        if ! "$strata" template --template "$data/$stem.jinja" --vars "$work/vars.json" "${flag[@]}" \
                --now 2026-01-15T00:00:00 > "$work/out.txt"; then
            echo "FAIL: $stem $conv gen$gen: render failed"; failures=$((failures + 1)); return
        fi
        if ! cmp "$work/out.txt" "$expected.txt"; then
            echo "FAIL: $stem $conv gen$gen: bytes differ"; failures=$((failures + 1)); return
        fi
    else
        if "$strata" template --template "$data/$stem.jinja" --vars "$work/vars.json" "${flag[@]}" \
                --now 2026-01-15T00:00:00 > "$work/out.txt" 2> "$work/err.txt"; then
            echo "FAIL: $stem $conv gen$gen: expected an error, got a render"; failures=$((failures + 1)); return
        fi
        if ! grep -qF -- "$(cat "$expected.error.txt")" "$work/err.txt"; then
            echo "FAIL: $stem $conv gen$gen: stderr lacks the expected message"; cat "$work/err.txt"
            failures=$((failures + 1)); return
        fi
    fi
    echo "ok: $stem $conv gen$gen"
}

render_case Qwen3.5-4B 05_tool_calling 1                         # macros, namespace, |items, tojson
render_case meta-llama-Llama-3.2-3B-Instruct 06_unicode_escaping 0  # strftime_now, tojson(indent=4)
render_case openai-gpt-oss-120b 05_tool_calling 1                # recursive macros, loop.index slices
render_case fireworks-ai-llama-3-firefunction-v2 08_content_parts 0  # {% filter %}, block set, list repr
render_case GLM-4.6 04_reasoning_content 1                       # lstrip_blocks, inline if
render_case mistralai-Mistral-Nemo-Instruct-2407 03_multi_turn 0 # raise_exception -> error exit
render_case llama-cpp-deepseek-r1 05_tool_calling 0              # map() generator -> TypeError

# add_generation_prompt given in the variables wins over the flag.
printf '{{ add_generation_prompt }}' > "$work/t.jinja"
printf '{"add_generation_prompt": false}' > "$work/v.json"
out="$("$strata" template --template "$work/t.jinja" --vars "$work/v.json" --add-generation-prompt)"
[[ "$out" == "False" ]] || { echo "FAIL: vars should override the flag, got '$out'"; failures=$((failures + 1)); }

if (( failures > 0 )); then
    echo "$failures failure(s)"
    exit 1
fi
echo "all template renders match"
