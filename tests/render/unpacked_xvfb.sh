#!/bin/sh
# Build a runnable Xvfb without installing it: Debian's .debs unpacked (apt-get download +
# dpkg -x) into $1 (default /tmp/arena-xvfb), and $1/xvfb, a wrapper that starts it in a
# private mount namespace (root, unshare -m) where its compiled-in /usr/bin/xkbcomp and
# /var/lib/xkb are the unpacked copies. Then: ARENA_GYM_XVFB=$1/xvfb pytest tests/render
set -eu
D=${1:-/tmp/arena-xvfb}
mkdir -p "$D/debs" "$D/root" "$D/ubin" "$D/origbin" "$D/varlib/xkb"
cd "$D/debs"
apt-get download xvfb libxfont2 xserver-common x11-xkb-utils xkb-data
for f in *.deb; do dpkg -x "$f" "$D/root"; done
rm -f "$D"/ubin/*
for f in /usr/bin/*; do ln -s "$D/origbin/$(basename "$f")" "$D/ubin/$(basename "$f")"; done
rm -f "$D/ubin/xkbcomp" && cp "$D/root/usr/bin/xkbcomp" "$D/ubin/xkbcomp"
cat > "$D/run" <<INNER
#!/bin/sh
mount --bind /usr/bin $D/origbin
mount --bind $D/ubin /usr/bin
mount --bind $D/varlib /var/lib
export LD_LIBRARY_PATH=$D/root/usr/lib/x86_64-linux-gnu
exec $D/root/usr/bin/Xvfb "\$@" -xkbdir $D/root/usr/share/X11/xkb -nolisten tcp
INNER
printf '#!/bin/sh\nexec unshare -m %s/run "$@"\n' "$D" > "$D/xvfb"
chmod +x "$D/run" "$D/xvfb"
echo "$D/xvfb"
