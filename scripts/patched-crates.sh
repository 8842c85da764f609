#!/usr/bin/env bash
# Makes the crates sharebench carries fixes for (third_party/README.md): third_party/NAME
# is the crate exactly as crates.io publishes it, checked against its SHA-256, with
# third_party/NAME.patches/*.patch applied in order. Cargo builds it in place of the
# published crate ([patch.crates-io] in Cargo.toml), so every cargo command needs it:
# `make build`, `make test` and the other targets run this first.
# Idempotent and quick: a crate is made again only when its patches or version change.
set -euo pipefail
cd "$(dirname "$0")/.."

fail() {
  echo "patched-crates: $*" >&2
  exit 1
}

# prepare NAME VERSION SHA256
prepare() {
  local name=$1 version=$2 sha=$3
  local dir=third_party/$name patches=third_party/$name.patches
  local stamp
  stamp="$version $(cat "$patches"/*.patch | sha256sum | cut -d' ' -f1)"
  if [ -f "$dir/.sharebench-patched" ] && [ "$(cat "$dir/.sharebench-patched")" = "$stamp" ]; then
    return
  fi
  command -v patch >/dev/null || fail "'patch' is missing (scripts/install-deps.sh installs it)"

  # The .crate file: cargo's download cache if it has it, else crates.io.
  local crate
  crate=$(ls "${CARGO_HOME:-$HOME/.cargo}"/registry/cache/*/"$name-$version.crate" 2>/dev/null | head -n 1 || true)
  local work
  work=$(mktemp -d)
  trap 'rm -rf "$work"' RETURN
  if [ -z "$crate" ]; then
    crate=$work/$name-$version.crate
    curl -fsSL --retry 3 --max-time 120 -o "$crate" \
      "https://static.crates.io/crates/$name/$name-$version.crate" ||
      fail "cannot download $name $version from crates.io"
  fi
  echo "$sha  $crate" | sha256sum --check --quiet ||
    fail "$crate is not $name $version as crates.io published it (SHA-256 differs)"

  mkdir "$work/src"
  tar -xzf "$crate" -C "$work/src" --strip-components=1
  local p
  for p in "$patches"/*.patch; do
    patch --quiet --forward --batch -p1 -d "$work/src" <"$p" ||
      fail "$p does not apply to $name $version"
  done
  echo "$stamp" >"$work/src/.sharebench-patched"
  rm -rf "$dir"
  mv "$work/src" "$dir"
  echo "patched-crates: $dir is $name $version with $(ls "$patches"/*.patch | wc -l) patches" >&2
}

# The SHA-256 is Cargo.lock's checksum of the published crate.
prepare nfs-rs 0.11.1 39deafafcd18d68d46634ab3760dc536473b8f830fbb6ffc758af03b53693128
prepare smb2 0.39.0 fdf2efe6ebfe83abf0813ef2de818ed1095cb36a19e7b2f6d44b3226238b202f
