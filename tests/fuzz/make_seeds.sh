#!/usr/bin/env bash
# Writes the seed corpora of the fuzz harnesses into seeds/ (committed): a small tube character
# in the text format (text), its bakes for lbs, ps and fps (bake, made with sinew-bake from BIN,
# default build/bin), small models of assimp's formats (assimp), and plugin answers (plugin).
# Usage: tests/fuzz/make_seeds.sh [BIN]
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BIN=${1:-$HERE/../../build/bin}
SEEDS=$HERE/seeds
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$SEEDS/text" "$SEEDS/bake" "$SEEDS/assimp" "$SEEDS/plugin"

# The tube: 7 rings of 8 vertices along x from -3 to 3, radius 1, closed by two cap centres;
# three joints along its axis; an animation of three frames bending the middle joint.
python3 - "$TMP" <<'PY'
import math, sys
d = sys.argv[1]
v = []
for r in range(7):
    x = -3.0 + r
    for s in range(8):
        a = 2 * math.pi * s / 8
        v.append((x, math.cos(a), math.sin(a)))
v.append((-3.2, 0.0, 0.0)); v.append((3.2, 0.0, 0.0))
f = []
for r in range(6):
    for s in range(8):
        a, b = r * 8 + s, r * 8 + (s + 1) % 8
        f.append((a, a + 8, b)); f.append((b, a + 8, b + 8))
for s in range(8):
    f.append((56, s, (s + 1) % 8)); f.append((57, 48 + (s + 1) % 8, 48 + s))
with open(d + "/c.off", "w") as o:
    o.write("OFF\n%d %d 0\n" % (len(v), len(f)))
    for p in v: o.write("%g %g %g\n" % p)
    for t in f: o.write("3 %d %d %d\n" % t)
with open(d + "/c.skel", "w") as o:
    o.write("3\n-3 0 0 j0 root\n0 0 0 j1 j0\n3 0 0 j2 j1\n")
with open(d + "/c.anim", "w") as o:
    o.write("3 3\n")
    for k, ang in enumerate((0.0, 0.8, 1.6)):
        o.write("%d\n1 0 0\n0 0 1\n0 1 0\n0 %g 0.2\n" % (k, ang))
with open(d + "/c.ini", "w") as o:
    o.write("SIMMESH c.off\nSKELETON c.skel\nANIMATION c.anim\n")
with open(d + "/vis.ini", "w") as o:
    o.write("SIMMESH c.off\nVISMESH c.off\nSKELETON c.skel\nANIMATION c.anim\n")
PY
sep=$'\n#--8<--\n'
for ini in c vis; do
    { cat "$TMP/$ini.ini"; printf '%s' "$sep"; cat "$TMP/c.off"; printf '%s' "$sep"
      cat "$TMP/c.skel"; printf '%s' "$sep"; cat "$TMP/c.anim"; } > "$SEEDS/text/tube_$ini"
done

for backend in lbs ps fps; do
    "$BIN/sinew-bake" --character "$TMP/c.ini" --backend "$backend" --out "$SEEDS/bake/tube_$backend.bake" \
        --threads 1 --quiet >/dev/null
done

# assimp: the first byte picks the extension (fuzz_assimp.c: obj 0, x 1, gltf 2, dae 3).
python3 - "$TMP" "$SEEDS/assimp" <<'PY'
import sys
d, out = sys.argv[1], sys.argv[2]
lines = open(d + "/c.off").read().split("\n")
nv, nf, _ = map(int, lines[1].split())
verts = lines[2:2 + nv]
faces = [l.split()[1:] for l in lines[2 + nv:2 + nv + nf]]
obj = "".join("v %s\n" % p for p in verts) + "".join("f %d %d %d\n" % tuple(int(i) + 1 for i in t) for t in faces)
open(out + "/tube_obj", "wb").write(b"\x00" + obj.encode())
PY
M=${SINEW_ASSIMP_MODELS_DIR:-/usr/share/assimp/models}
[ -f "$M/glTF2/simple_skin/simple_skin.gltf" ] && { printf '\x02'; cat "$M/glTF2/simple_skin/simple_skin.gltf"; } > "$SEEDS/assimp/simple_skin_gltf"

# plugin answers (fuzz_plugin_table.c): one good table with every function, one refused.
# head 0 (result, codes and ABI default), name "good", one backend: table 0 of the default
# size named "rigd" with every function, in slot 0.
printf '\x00\x04good\x01\x00\x04rigd\xff\x00' > "$SEEDS/plugin/one_backend"
# the same with two backends, the second a table without functions (refused)
printf '\x00\x04good\x02\x00\x04rigd\xff\x00\x00\x04bare\x00\x00' > "$SEEDS/plugin/two_backends"
echo "seeds written to $SEEDS"
