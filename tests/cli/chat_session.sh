#!/usr/bin/env bash
# `strata chat` end to end: a scripted conversation through stdin on a synthetic model with a
# small chat template; every turn must produce a reply line, /reset must clear, EOF must exit 0.
set -euo pipefail
strata="$1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$strata" synth --preset tiny --layers 2 -o "$work/m.gguf" 2>/dev/null
cat > "$work/t.jinja" <<'TEMPLATE'
{% for m in messages %}<|{{ m.role }}|>
{{ m.content }}
{% endfor %}{% if add_generation_prompt %}<|assistant|>
{% endif %}
TEMPLATE
printf 'Hello there\nHow are you\n/reset\nAgain\n' |
  "$strata" chat -m "$work/m.gguf" --chat-template "$work/t.jinja" -n 4 --temp 0 >"$work/out" 2>"$work/err"
replies=$(grep -c "tokens, .* tok/s" "$work/err")
[[ "$replies" == 3 ]] || { echo "expected 3 replies, got $replies"; cat "$work/err"; exit 1; }
grep -q "(conversation cleared)" "$work/err" || { echo "/reset was not acknowledged"; exit 1; }

# A model without a template is refused with the fix named.
if "$strata" chat -m "$work/m.gguf" </dev/null 2>"$work/err2"; then
  echo "chat without a template should fail"; exit 1
fi
grep -q "no chat template" "$work/err2" || { cat "$work/err2"; exit 1; }
echo "chat_session: ok"
