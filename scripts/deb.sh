#!/usr/bin/env bash
# Builds target/sharebench_VERSION_ARCH.deb from the release binary (make deb; OUT=DIR puts it there): the binary,
# its manual pages and its bash, zsh and fish completions, as `make install` lays them out
# under /usr. Depends: the shared libraries the binary links (dpkg-shlibdeps reads them from
# the binary itself); Recommends: the lab's servers and clients (scripts/install-deps.sh).
# Install with `apt-get install ./target/sharebench_*.deb`; `apt-get remove sharebench`
# takes it all away.
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=${BIN:-target/release/sharebench}
[[ -x $BIN ]] || { echo "deb: no $BIN; run make build first" >&2; exit 1; }
for tool in dpkg-deb dpkg-shlibdeps dpkg-architecture; do
  command -v "$tool" >/dev/null || { echo "deb: $tool missing (apt-get install dpkg-dev)" >&2; exit 1; }
done

version=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
[[ -n $version ]] || { echo "deb: no version in Cargo.toml [workspace.package]" >&2; exit 1; }
arch=$(dpkg --print-architecture)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root="$work/root"

make --no-print-directory lay-out DESTDIR="$root" PREFIX=/usr BIN="$BIN" >/dev/null
# Debian keeps manual pages compressed.
gzip -9n "$root"/usr/share/man/man1/*.1

# dpkg-shlibdeps wants a source package around the binary: a minimal one, here only.
mkdir -p "$work/src/debian"
printf 'Source: sharebench\n\nPackage: sharebench\nArchitecture: any\n' >"$work/src/debian/control"
depends=$(cd "$work/src" && dpkg-shlibdeps -O "$root/usr/bin/sharebench" 2>/dev/null |
  sed -n 's/^shlibs:Depends=//p')
[[ -n $depends ]] || { echo "deb: dpkg-shlibdeps found no libraries in $BIN" >&2; exit 1; }

recommends=$(sed -n 's/^LAB_PACKAGES=(\(.*\))$/\1/p' scripts/install-deps.sh | tr ' ' '\n' |
  grep -v -- '-dev$' | paste -sd, - | sed 's/,/, /g')

mkdir -p "$root/DEBIAN"
cat >"$root/DEBIAN/control" <<EOF
Package: sharebench
Version: $version
Architecture: $arch
Maintainer: sharebench developers <sharebench@localhost>
Section: admin
Priority: optional
Installed-Size: $(du -sk "$root/usr" | cut -f1)
Depends: $depends
Recommends: $recommends
Description: compare file-sharing protocols and file systems
 sharebench measures NFS, SMB and GlusterFS mounts and native clients (IOzone's
 file-size x record-size matrix, metadata, small files, streams, load curves),
 decides which is faster, for which sizes, by how much, how stably and at what
 CPU cost, and reproduces published studies in a lab of real servers.
EOF

out="${OUT:-target}/sharebench_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$root" "$out" >/dev/null
echo "deb: $out"
echo "deb: Depends: $depends"
