#!/usr/bin/env bash
# ci/gate.sh's base build, end to end with stand-ins (nvidia-smi listing a GPU, a cmake that
# writes a gpucheck echoing its arguments, a deps.sh that installs nothing) in a throwaway git
# repo holding ci/gate.sh and ci/env.sh: GPUCHECK_BASE_REF builds the merge base beside the
# build (BUILD-base, from the worktree BUILD-base-src) and passes --base-bin-dir; GPUCHECK_BASE_BIN
# passes its folder; a --base-bin-dir in the flags wins; a ref that is not there is exit 2 in
# one line, with only this build built.
# Usage: check_gate_sh_base_build.sh SOURCE_DIR WORKDIR
set -uo pipefail
src=$(realpath "$1") work=$2
rm -rf "$work" && mkdir -p "$work/repo/ci" "$work/fake" && cd "$work" || exit 1
failures=0
check() { "${@:2}" || { echo "FAIL: $1"; failures=$((failures + 1)); }; }
cp "$src/ci/gate.sh" "$src/ci/env.sh" repo/ci/
printf '#!/usr/bin/env bash\nexit 0\n' > repo/ci/deps.sh
cat > fake/nvidia-smi << 'SH'
#!/usr/bin/env bash
case "$*" in
  -L) echo "GPU 0: NVIDIA H200 (UUID: GPU-fake)" ;;
  *compute_cap*) echo "9.0" ;;
esac
SH
cat > fake/cmake << 'SH'
#!/usr/bin/env bash
if [[ $1 == --build ]]; then
  mkdir -p "$2/bin" && printf '#!/bin/sh\necho gpucheck "$@"\n' > "$2/bin/gpucheck" && chmod +x "$2/bin/gpucheck"
  exit 0
fi
while (($#)); do case $1 in -S) s=$2; shift 2 ;; -B) b=$2; shift 2 ;; *) shift ;; esac; done
mkdir -p "$b" && printf 'CMAKE_GENERATOR:INTERNAL=Fake\nCMAKE_CUDA_ARCHITECTURES:STRING=90\n' > "$b/CMakeCache.txt"
echo "$s" > "$b/source"
SH
chmod +x fake/nvidia-smi fake/cmake repo/ci/deps.sh
git() { command git -C "$work/repo" -c user.name=t -c user.email=t@t -c init.defaultBranch=main "$@"; }
git init -q && git add -A && git commit -qm one && one=$(git rev-parse HEAD)
echo two > repo/f && git add -A && git commit -qm two
# gate ENV...: ci/gate.sh with the stand-ins; its last line in last.txt, stderr in err.txt.
gate() {
  env PATH="$work/fake:$PATH" BUILD_DIR="$work/b/build" RESULTS_DIR="$work/res" GPUCHECK_HISTORY=off "$@" \
    bash "$work/repo/ci/gate.sh" "${flags[@]}" > out.txt 2> err.txt
  rc=$?
  tail -1 out.txt > last.txt
}
flags=()
gate GPUCHECK_BASE_REF=HEAD~1
check "GPUCHECK_BASE_REF: exit 0" test "$rc" -eq 0
check "... the merge base checked out beside the build" test "$(command git -C b/build-base-src rev-parse HEAD)" = "$one"
check "... built from it" test "$(cat b/build-base/source)" = "$work/b/build-base-src"
check "... and passed" grep -q -- "--base-bin-dir $work/b/build-base/bin\$" last.txt
check "... said" grep -q "^gate: base build: $one, the merge base of HEAD and HEAD~1" out.txt
gate GPUCHECK_BASE_BIN=/x/bin
check "GPUCHECK_BASE_BIN: passed as it is" grep -q -- "--base-bin-dir /x/bin\$" last.txt
flags=(--base-bin-dir /y)
gate GPUCHECK_BASE_REF=HEAD~1
check "--base-bin-dir in the flags wins" test "$(grep -o -- '--base-bin-dir [^ ]*' last.txt)" = "--base-bin-dir /y"
flags=()
rm -rf b
gate GPUCHECK_BASE_REF=no-such-ref
check "a ref that is not there: exit 2" test "$rc" -eq 2
check "... one line" test "$(cat err.txt)" = "gpucheck: GPUCHECK_BASE_REF=no-such-ref: no such commit in $work/repo (fetch it first)"
check "... no base build" test ! -e b/build-base
((failures == 0)) && echo "gate.sh base build: all checks passed"
exit $((failures > 0))
