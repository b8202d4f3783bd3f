#!/usr/bin/env bash
# Prints the Debian mirror this machine's apt uses for SUITE (default
# bookworm), from its one-line (*.list) and deb822 (*.sources) sources, so
# that a folder made with debootstrap (scripts/setup_forky.sh,
# scripts/fresh_machine_check.sh) fetches from the same place as apt does.
#   bash scripts/debian_mirror.sh [SUITE]      → URI, or exit 1 when none
#   bash scripts/debian_mirror.sh --all        → "URI SUITE" per enabled source
set -euo pipefail

host_sources() {
  local f
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [[ -f "$f" ]] || continue
    awk '$1 == "deb" { i = 2; if ($2 ~ /^\[/) { while ($i !~ /\]$/) i++; i++ } print $i, $(i + 1) }' "$f"
  done
  for f in /etc/apt/sources.list.d/*.sources; do
    [[ -f "$f" ]] || continue
    awk 'function flush() { if (types ~ /(^| )deb( |$)/ && enabled != "no") for (u in uris) for (s in suites) print uris[u], suites[s]
                            types = ""; enabled = ""; split("", uris); split("", suites) }
         /^[ \t]*#/ { next }
         /^[ \t]*$/ { flush(); next }
         { key = tolower($1); sub(/:$/, "", key); $1 = "" ; sub(/^ /, "")
           if (key == "types") types = $0
           else if (key == "enabled") enabled = tolower($0)
           else if (key == "uris") split($0, uris, " ")
           else if (key == "suites") split($0, suites, " ") }
         END { flush() }' "$f"
  done
}

if [[ "${1:-}" == --all ]]; then
  host_sources | sed 's:/* : :' | sort -u
  exit 0
fi
suite="${1:-bookworm}"
uri="$(host_sources | sed 's:/* : :' | awk -v s="$suite" '$2 == s { print $1; exit }')"
if [[ -z "$uri" ]]; then
  echo "debian_mirror: this machine's apt has no source for $suite" >&2
  exit 1
fi
echo "$uri"
