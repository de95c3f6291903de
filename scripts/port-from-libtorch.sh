#!/bin/sh
# Ports LibTorch C++ sources to tapegrad by renaming, in place (or to stdout with -n):
#   scripts/port-from-libtorch.sh [-n] FILE...
#
# - the namespaces torch::, at:: and c10:: (also ::torch::, `using namespace torch`,
#   `namespace F = torch::nn::functional`) become tg:: (tg::nn::functional, tg::indexing, ...;
#   device spellings such as torch::kCUDA stay device spellings: tg::kCUDA);
# - every #include of a <torch/...>, <ATen/...> or <c10/...> header becomes
#   #include <tapegrad/tapegrad.hpp>, which gives what <torch/torch.h> gives;
# - the macros TORCH_X become TG_X (TORCH_MODULE, TORCH_CHECK, TORCH_INTERNAL_ASSERT, TORCH_WARN,
#   TORCH_ARG, ...), AT_ASSERT / AT_ASSERTM / AT_ERROR become TG_ASSERT / TG_ASSERTM / TG_ERROR.
# A name tapegrad does not have is then a compile error, never another meaning. Running the
# script twice changes nothing the second time. POSIX sh and sed only.
set -eu

usage() {
    echo "usage: $0 [-n] FILE...   (-n: print the ported files to stdout, change nothing)" >&2
    exit 2
}

dry=0
while [ $# -gt 0 ]; do
    case "$1" in
        -n) dry=1; shift ;;
        -h|--help) usage ;;
        --) shift; break ;;
        -*) echo "$0: unknown option $1" >&2; usage ;;
        *) break ;;
    esac
done
[ $# -gt 0 ] || usage

# A name is renamed only where it starts an identifier: after a character that cannot be part of
# one (nor ':' of a longer qualified name) or at the start of a line, so mytorch::, ns::at:: and
# MY_TORCH_X stay as they are. (Plain BRE: no \| alternation, no \b, no -i, no -E.)
id='[^A-Za-z0-9_]'
script=''
for h in torch ATen c10; do
    script="$script
s|^\\([ 	]*#[ 	]*include[ 	]*\\)[<\"]$h/[^>\"]*[>\"]|\\1<tapegrad/tapegrad.hpp>|"
done
for ns in torch at c10; do
    script="$script
s/^::$ns::/::tg::/
s/^$ns::/tg::/
s/\\([^A-Za-z0-9_:]\\)::$ns::/\\1::tg::/g
s/\\([^A-Za-z0-9_:]\\)$ns::/\\1tg::/g
s/\\(namespace[ 	][ 	]*\\)$ns\\($id\\)/\\1tg\\2/g
s/\\(namespace[ 	][ 	]*\\)$ns\$/\\1tg/"
done
script="$script
s/^TORCH_/TG_/
s/\\($id\\)TORCH_/\\1TG_/g"
for m in ASSERT ASSERTM ERROR; do
    script="$script
s/^AT_$m\\($id\\)/TG_$m\\1/
s/^AT_$m\$/TG_$m/
s/\\($id\\)AT_$m\\($id\\)/\\1TG_$m\\2/g
s/\\($id\\)AT_$m\$/\\1TG_$m/"
done

port() {
    sed -e "$script" "$1"
}

status=0
for f in "$@"; do
    if [ ! -f "$f" ]; then
        echo "$0: $f: not a file" >&2
        status=1
        continue
    fi
    if [ "$dry" = 1 ]; then
        port "$f"
        continue
    fi
    tmp="$f.port.$$"
    if port "$f" > "$tmp"; then
        # cat, not mv: the file keeps its permissions, owner and links
        if ! cmp -s "$tmp" "$f"; then cat "$tmp" > "$f"; fi
        rm -f "$tmp"
    else
        rm -f "$tmp"
        status=1
    fi
done
exit $status
