#!/bin/sh
# Checks scripts/port-from-libtorch.sh (CTest: test_port_script): the renames of sample.cpp.in
# against sample.cpp.expected, that a second run changes nothing, the in-place mode on several
# files (keeping their permissions), and the usage errors.
#   sh tests/port_script/check.sh scripts/port-from-libtorch.sh
set -eu
script=$1
dir=$(dirname "$0")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
    echo "check.sh: $*" >&2
    exit 1
}

sh "$script" -n "$dir/sample.cpp.in" > "$tmp/out.cpp"
diff "$dir/sample.cpp.expected" "$tmp/out.cpp" || fail "-n: the renames differ from sample.cpp.expected"
sh "$script" -n "$tmp/out.cpp" | diff "$tmp/out.cpp" - || fail "a second run changed the file"

cp "$dir/sample.cpp.in" "$tmp/a.cpp"
cp "$dir/sample.cpp.in" "$tmp/b.cpp"
chmod 640 "$tmp/a.cpp"
sh "$script" "$tmp/a.cpp" "$tmp/b.cpp"
diff "$dir/sample.cpp.expected" "$tmp/a.cpp" || fail "in place: a.cpp differs"
diff "$dir/sample.cpp.expected" "$tmp/b.cpp" || fail "in place: b.cpp differs"
[ "$(ls -l "$tmp/a.cpp" | cut -c1-10)" = "-rw-r-----" ] || fail "in place: permissions changed"
[ -z "$(ls "$tmp" | grep port)" ] || fail "in place: a temporary file was left behind"

status=0
sh "$script" > /dev/null 2>&1 || status=$?
[ "$status" = 2 ] || fail "no file: exit status $status, expected 2"
status=0
sh "$script" -x "$tmp/a.cpp" > /dev/null 2>&1 || status=$?
[ "$status" = 2 ] || fail "unknown option: exit status $status, expected 2"
cp "$dir/sample.cpp.in" "$tmp/c.cpp"
status=0
sh "$script" "$tmp/missing.cpp" "$tmp/c.cpp" 2> /dev/null || status=$?
[ "$status" = 1 ] || fail "a missing file: exit status $status, expected 1"
diff "$dir/sample.cpp.expected" "$tmp/c.cpp" > /dev/null || fail "a missing file stopped the rest"
echo "port-from-libtorch.sh: every check passed"
