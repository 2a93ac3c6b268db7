#!/bin/bash
# build-cost.sh: the cold build of ./cmd/soakd, and what each module costs it.
#
# Usage: bash bench/build-cost.sh [go build flags...]   (from the repository root)
#
# Builds ./cmd/soakd with an empty build cache of its own (removed at the
# end: nobody else's cache is touched) and the modules already downloaded,
# running every compile, asm, cgo and link under /usr/bin/time through
# -toolexec. Prints the build's wall and CPU time, the binary's size and
# the CPU seconds of the tool runs by module (std: the standard library),
# most first. CPU time holds on a busy machine where wall time does not;
# say the load average (printed) with any figure. docs/layout.md,
# "Dependencies and the cold build", has the figures of issue 44.
set -euo pipefail
work=$(mktemp -d /tmp/build-cost.XXXXXX)
trap 'rm -rf "$work"' EXIT
cat > "$work/texec.sh" <<'WRAP'
#!/bin/bash
tool=$1; shift
pkg=-; prev=
for a in "$@"; do [ "$prev" = "-p" ] && pkg=$a; prev=$a; done
case "$*" in *-V=full*) exec "$tool" "$@";; esac
exec /usr/bin/time -a -o "$TEXEC_LOG" -f "$(basename "$tool") $pkg %U %S" "$tool" "$@"
WRAP
chmod +x "$work/texec.sh"
mkdir "$work/cache"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
GOCACHE="$work/cache" TEXEC_LOG="$work/tools.log" GOFLAGS="-mod=mod -buildvcs=false" \
	/usr/bin/time -o "$work/time" -f "%e s wall, %U s user + %S s sys" \
	go build -toolexec "$work/texec.sh" -o "$work/soakd" "$@" ./cmd/soakd
echo "load after:  $(cut -d' ' -f1-3 /proc/loadavg)"
echo "cold build:  $(cat "$work/time")"
echo "binary:      $(stat -c %s "$work/soakd") bytes"
GOFLAGS="-mod=mod -buildvcs=false" go list -deps -f '{{.ImportPath}} {{with .Module}}{{.Path}}{{else}}std{{end}}' ./cmd/soakd > "$work/mods"
awk 'NR == FNR { mod[$1] = $2; next }
	NF == 4 && $1 != "Command" {
		m = ($1 == "link") ? "(link)" : ($2 == "-") ? "(cgo and asm helpers)" : ($2 in mod) ? mod[$2] : "(other)"
		cpu[m] += $3 + $4; total += $3 + $4
	}
	END {
		for (m in cpu) printf "%8.1f s %5.1f %%  %s\n", cpu[m], 100 * cpu[m] / total, m | "sort -rn"
		close("sort -rn")
		printf "%8.1f s          all tool runs\n", total
	}' "$work/mods" "$work/tools.log"
