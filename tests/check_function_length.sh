#!/usr/bin/env bash
# No function over 250 lines anywhere, none over 200 in kernels/src/hopper/ (STYLE: "a function
# fits on a few screens"). Reads function extents with Universal Ctags; exits 77 (skipped) where
# it is not installed. Usage: check_function_length.sh SOURCE_DIR
set -uo pipefail
cd "$1" || exit 2
if ! ctags --version 2>/dev/null | grep -q "Universal Ctags"; then
  echo "skipped: Universal Ctags is not installed (apt-get install universal-ctags)"; exit 77
fi
bad=0 n=0 longest=0 where=""
while read -r len file line name; do
  n=$((n + 1))
  ((len > longest)) && { longest=$len; where="$file:$line $name"; }
  limit=250
  [[ $file == kernels/src/hopper/* ]] && limit=200
  if ((len > limit)); then echo "$file:$line: $name is $len lines (limit $limit)"; bad=1; fi
done < <(ctags -R -x --_xformat='%{end} %n %F %N' --kinds-C++=f --kinds-C=f --langmap=C++:+.cu.cuh --fields=+ne \
           core kernels benchmarks compare 2>/dev/null | awk '$1 ~ /^[0-9]+$/ {print $1 - $2 + 1, $3, $2, $4}')
((n > 0)) || { echo "no functions read: wrong folder?"; exit 2; }
((bad == 0)) && echo "functions: $n read, the longest $longest lines ($where)"
exit $bad
