#!/usr/bin/env bash
# kernels/check.sh — compile every kernel module the way the build does and check the result.
#
#   nvcc -ptx -rdc=true -arch=compute_75 -Ikernels <defines> <file>.cu        (per file)
#   ptxas -c -arch=<sm> -v -warn-spills -warn-lmem-usage <file>.ptx            (per file, per sm)
#   nvlink -arch=<sm> <cubins of the module>                                   (per module)
#
# Fails on any nvcc warning or error, on any ptxas/nvlink warning for the first arch (sm_90 by
# default) and on any spill or stack frame there; for further archs (-a) ptxas errors fail and
# spills are listed as notes (the register caps are tuned for the first arch).
# Prints one line per kernel: module, nvcc seconds, ptxas seconds, registers, spills, stack,
# static shared memory.
#
# Usage: kernels/check.sh [-j JOBS] [-o OUTDIR] [-a "sm_90 sm_80 ..."] [MODULE_GLOB]
#   -j   parallel jobs (default: number of cores)
#   -o   output folder (default kernels/build): <module>.ptx files, <module>.<sm>.cubin (linked)
#   -a   real archs for ptxas/nvlink (default sm_90); the first one is reported
#   MODULE_GLOB  only modules matching it, e.g. 'si_3d_f64_*' or 'si_*_interp_sm' (default all;
#                the real-valued spreading modules are si_{d}d_f32r_... / f64r_...)
# Environment: CUDA_PATH / CUDA_HOME (default /usr/local/cuda); WF_EXTRA_DEFS: extra nvcc
# flags for experiments (e.g. "-DWF_SPREAD_SM_FIX=0" for the float-atomic 1D/2D f32 spread);
# WF_PTX_ARCH: the PTX's virtual arch (default compute_75, as the build; compute_90 compiles the
# __CUDA_ARCH__ >= 900 paths, e.g. wf_atomic_add's vector atomic, and lets the harness compare
# what an sm_90-specific PTX would gain); WF_RDC=0: whole-program PTX and a non-relocatable
# ptxas cubin (no nvlink), as NVRTC builds compile, against the build's -rdc=true + nvlink.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# the spreading modules' names: module_names.h's printf format of (dim, prec, width, dir, method)
si_fmt=$(sed -n 's/^#define WF_SI_MODULE_FMT *"\(.*\)"$/\1/p' "$here/module_names.h")
cuda="${CUDA_PATH:-${CUDA_HOME:-/usr/local/cuda}}"
NVCC="$cuda/bin/nvcc"
PTXAS="$cuda/bin/ptxas"
NVLINK="$cuda/bin/nvlink"

# ---- one module (worker; called back through xargs) ----
if [[ "${1:-}" == "--one" ]]; then
    mod="$2"; out="$3"; archs="$4"
    log="$out/$mod.log"; : >"$log"
    ok=1
    case "$mod" in
    sort) files="sort"; defs="" ;;
    scan_big) files="scan_big"; defs="" ;;
    sort_stable) files="sort_stable"; defs="" ;;
    bin_* | deconvolve_* | amplify_*)
        IFS=_ read -r job d p <<<"$mod"
        files="prep"
        job=$(echo "$job" | tr '[:lower:]' '[:upper:]')
        defs="-DWF_DIM=${d%d} -DWF_PREC=${p#f} -DWF_PREP_PART=WF_PREP_$job" ;;
    offsets_*)
        IFS=_ read -r _ d p <<<"$mod"
        files="offsets"; defs="-DWF_DIM=${d%d} -DWF_PREC=${p#f}" ;;
    direct_f32 | direct_f64) files="direct"; defs="-DWF_PREC=${mod#direct_f}" ;;
    type3_f32 | type3_f64) files="type3"; defs="-DWF_PREC=${mod#type3_f}" ;;
    toeplitz_f32 | toeplitz_f64) files="toeplitz"; defs="-DWF_PREC=${mod#toeplitz_f}" ;;
    si_*_spread_gm | si_*_spread_sm | si_*_spread_od | si_*_interp_gm | si_*_interp_sm)
        IFS=_ read -r _ d p w part method <<<"$mod"
        # shellcheck disable=SC2059
        if [[ "$(printf "$si_fmt" "${d%d}" "$p" "${w#w}" "$part" "$method")" != "$mod" ]]; then
            echo "$mod: module_names.h names modules differently now (update this reading)" >&2
            exit 2
        fi
        files="spreadinterp"
        part=$([[ $part == spread ]] && echo WF_SI_SPREAD || echo WF_SI_INTERP)
        method=WF_SI_$(echo "$method" | tr '[:lower:]' '[:upper:]')
        # precision f32 / f64, or f32r / f64r: the real-valued variant (-DWF_REAL=1)
        prec=${p#f}
        defs="-DWF_DIM=${d%d} -DWF_PREC=${prec%r} -DWF_W=${w#w} -DWF_SI_PART=$part"
        defs+=" -DWF_SI_METHOD=$method"
        [[ $prec == *r ]] && defs+=" -DWF_REAL=1" ;;
    *) echo "unknown module $mod" >&2; exit 2 ;;
    esac
    t_nvcc=0; t_ptxas=0
    first_arch="${archs%% *}"
    rdc="-rdc=true"; reloc="-c"
    if [[ "${WF_RDC:-1}" == 0 ]]; then rdc=""; reloc=""; fi
    for f in $files; do
        ptx="$out/$mod.$f.ptx"
        t0=$(date +%s%N)
        if ! "$NVCC" -ptx $rdc -arch="${WF_PTX_ARCH:-compute_75}" -I"$here" $defs \
            ${WF_EXTRA_DEFS:-} \
            "$here/$f.cu" -o "$ptx" \
            >>"$log" 2>&1; then ok=0; fi
        t1=$(date +%s%N)
        t_nvcc=$((t_nvcc + (t1 - t0) / 1000000))
        [[ $ok == 1 ]] || break
        for a in $archs; do
            t0=$(date +%s%N)
            if [[ "$a" == "$first_arch" ]]; then
                "$PTXAS" $reloc -arch="$a" -v -warn-spills -warn-lmem-usage "$ptx" \
                    -o "$out/$mod.$f.$a.o" >"$out/$mod.$f.ptxas" 2>&1 || ok=0
                cat "$out/$mod.$f.ptxas" >>"$log"
            else
                "$PTXAS" $reloc -arch="$a" -warn-spills -warn-lmem-usage "$ptx" \
                    -o "$out/$mod.$f.$a.o" >"$out/$mod.$f.$a.ptxas" 2>&1 || ok=0
                grep -q "error" "$out/$mod.$f.$a.ptxas" && cat "$out/$mod.$f.$a.ptxas" >>"$log"
            fi
            t1=$(date +%s%N)
            if [[ "$a" == "$first_arch" ]]; then t_ptxas=$((t_ptxas + (t1 - t0) / 1000000)); fi
        done
    done
    if [[ $ok == 1 ]]; then
        for a in $archs; do
            objs=()
            for f in $files; do objs+=("$out/$mod.$f.$a.o"); done
            if [[ -z "$reloc" ]]; then # WF_RDC=0: one whole-program cubin per module
                cp "${objs[0]}" "$out/$mod.$a.cubin" || ok=0
            else
                "$NVLINK" -arch="$a" "${objs[@]}" -o "$out/$mod.$a.cubin" >>"$log" 2>&1 || ok=0
            fi
        done
    fi
    # warnings in the log (nvcc; ptxas of the first arch; nvlink) fail the module
    if grep -qi "warning" "$log"; then ok=0; fi
    # per-kernel summary from the first arch's ptxas -v
    summary=""
    if [[ -f "$out/$mod.${files%% *}.ptxas" ]]; then
        for f in $files; do
            summary+=$(awk -v mod="$mod" '
                /Compiling entry function/ { split($0, q, "\x27"); k=q[2] }
                /Function properties for/ { fn=$NF }
                /bytes stack frame/ { st=$1; sp=$5; sl=$9;
                    if (st+0 > 0 && fn !~ /__internal_trig_reduction_slowpath/) bad=bad " stack:" fn;
                    if (sp+0 > 0 || sl+0 > 0) bad=bad " spill:" fn }
                /Used [0-9]+ registers/ { r=$5; sm="0";
                    for (i=1;i<=NF;i++) if ($i ~ /smem/) sm=$(i-2);
                    printf "  %-34s regs %3d  stack %3s  spill %s/%s  smem %s\n", k, r, st, sp, sl, sm }
                END { if (bad != "") printf "  BAD%s\n", bad }' "$out/$mod.$f.ptxas")$'\n'
        done
    fi
    if grep -q "BAD" <<<"$summary"; then ok=0; fi
    # other archs: spills are reported, not fatal (register caps are tuned for the first arch)
    for a in $archs; do
        [[ "$a" == "$first_arch" ]] && continue
        for f in $files; do
            [[ -f "$out/$mod.$f.$a.ptxas" ]] || continue
            grep -o "function '[^']*', [0-9]* bytes spill stores" "$out/$mod.$f.$a.ptxas" |
                sed "s/^/  note $a: spill in /" >>"$out/$mod.notes" || true
        done
    done
    [[ -f "$out/$mod.notes" ]] && summary+=$(sort -u "$out/$mod.notes")$'\n' && rm -f "$out/$mod.notes"
    status=$([[ $ok == 1 ]] && echo ok || echo FAIL)
    printf "%-20s %-4s nvcc %5d ms  ptxas(%s) %5d ms\n%s" "$mod" "$status" "$t_nvcc" \
        "$first_arch" "$t_ptxas" "$summary" >"$out/$mod.summary"
    [[ $ok == 1 ]] || { echo "---- $mod log:"; cat "$log"; } >>"$out/$mod.summary"
    exit 0
fi

# ---- driver ----
jobs=$(nproc 2>/dev/null || echo 2)
out="$here/build"
archs="sm_90"
while getopts "j:o:a:" opt; do
    case "$opt" in
    j) jobs="$OPTARG" ;;
    o) out="$OPTARG" ;;
    a) archs="$OPTARG" ;;
    *) sed -n '2,20p' "$0"; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
glob="${1:-*}"

for tool in "$NVCC" "$PTXAS" "$NVLINK"; do
    [[ -x "$tool" ]] || { echo "check.sh: $tool not found (set CUDA_PATH)" >&2; exit 2; }
done
mkdir -p "$out"

modules=(sort scan_big sort_stable direct_f32 direct_f64 type3_f32 type3_f64 toeplitz_f32 toeplitz_f64)
for d in 1 2 3; do
    for p in f32 f64; do
        modules+=("bin_${d}d_$p" "deconvolve_${d}d_$p" "amplify_${d}d_$p" "offsets_${d}d_$p")
    done
    for w in $(seq 2 16); do
        for p in f32 f64 f32r f64r; do # f32r, f64r: the real-valued variants
            [[ $p == f32* && $w -gt 12 ]] && continue
            # shellcheck disable=SC2059
            for pm in spread_gm spread_sm spread_od interp_gm interp_sm; do # od: spreading only
                modules+=("$(printf "$si_fmt" "$d" "$p" "$w" "${pm%_*}" "${pm#*_}")")
            done
        done
    done
done
selected=()
for m in "${modules[@]}"; do
    # shellcheck disable=SC2053
    [[ "$m" == $glob ]] && selected+=("$m")
done
[[ ${#selected[@]} -gt 0 ]] || { echo "check.sh: no module matches '$glob'" >&2; exit 2; }

echo "check.sh: ${#selected[@]} modules, archs: $archs, $jobs jobs, output $out"
t0=$(date +%s)
printf "%s\n" "${selected[@]}" | xargs -P "$jobs" -I{} bash "$0" --one {} "$out" "$archs"
t1=$(date +%s)

nfail=0
for m in "${selected[@]}"; do
    cat "$out/$m.summary"
    grep -q "^$m *FAIL" "$out/$m.summary" && nfail=$((nfail + 1))
done
echo "check.sh: $(( ${#selected[@]} - nfail )) ok, $nfail failed, $((t1 - t0)) s"
[[ $nfail == 0 ]]
