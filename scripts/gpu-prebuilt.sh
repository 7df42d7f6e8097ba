#!/usr/bin/env bash
# A GPU build made on this (GPU-less) machine, carried to the GPU machine, so that a device call spends its minutes
# on tests and benchmarks instead of a ~250 s build.
#   scripts/gpu-prebuilt.sh pack     here: configure + build build-gpu/ as scripts/gpu-check.sh would (Hopper,
#                                    GSHMEM_GPU_TESTS=ON, GSHMEM_GPU_TEST_PES="2;$PES"), then write
#                                    .gpu-prebuilt/build-gpu.tar.xz: binaries and libraries without debug sections,
#                                    the CTest files, no object files; the shared libraries they need that are not
#                                    glibc's, the compiler's, CUDA's, NCCL's or MPI's go along in
#                                    build-gpu/prebuilt-lib; the Python package built with CUDA for the GPU
#                                    machine's Python (3.12; PREBUILT_PYTHON=<python> for another) in
#                                    build-gpu/py-site; and a manifest of the sources it was built from.
#   scripts/gpu-prebuilt.sh unpack   there: unpack it into build-gpu/, refuse it (and remove it) if a source differs
#                                    from the manifest (naming the files; PREBUILT_ANY=1 uses it anyway), and point
#                                    its CTest files at this checkout and this machine's tools.
# Then on the device: PREBUILT=1 STEPS=check scripts/gpu-all.sh (carry [".gpu-prebuilt"]): the check runs from
# build-gpu/ without building.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build-gpu
dir=$root/.gpu-prebuilt
# xz with a dictionary larger than any one file: the library's ~18 MB of device code is in libgshmem, the tools
# that link its objects and the Python package alike, and a window that spans them stores it once (gzip: 55 MB,
# this: ~12 MB of the device call's 64 MiB carry)
tarball=$dir/build-gpu.tar.xz
sources=(src include tests cmake bench tools examples python CMakeLists.txt pyproject.toml)  # what the builds read
# The files under them that travel to the device (tracked, and untracked ones git does not ignore), one a line
# (from git where the tree has a .git, else every file but Python's caches).
source_files() {
  if git -C "$root" rev-parse --git-dir >/dev/null 2>&1; then
    # only files that exist: the device's copy of the tree may carry a .git whose index still names files deleted
    # since (session 29: a stale index made unpack refuse a fresh pack)
    (cd "$root" && git ls-files -co --exclude-standard -- "${sources[@]}" | while IFS= read -r f; do
      [ -f "$f" ] && printf '%s\n' "$f"; done)
  else
    (cd "$root" && find "${sources[@]}" -type f ! -name '*.pyc' ! -path '*/__pycache__/*')
  fi | LC_ALL=C sort
}
# $1 with the characters sed's replacement and a '#'-delimited pattern treat specially escaped
sed_escape() { printf '%s' "$1" | sed 's/[][\\.*^$#&/]/\\&/g'; }
case ${1:-} in
  pack)
    grep -qx '/.gpu-prebuilt/' "$root/.gitignore" ||
      { echo "gpu-prebuilt.sh: .gitignore must list /.gpu-prebuilt/"; exit 1; }
    # one pack at a time: two at once once wrote the tarball together and only the device's xz saw it was corrupt
    # (bench/NOTES.md entry 75); the lock is released when this shell exits
    mkdir -p "$dir"
    exec 9>"$dir/pack.lock"
    flock -n 9 || { echo "gpu-prebuilt.sh: another 'pack' of this tree is running (it holds $dir/pack.lock);" \
                         "wait for it, then pack again"; exit 1; }
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGSHMEM_CUDA_ARCHITECTURES=90 \
      -DGSHMEM_GPU_TESTS=ON "-DGSHMEM_GPU_TEST_PES=$(echo 2 "${PES:-2}" | tr " " "\n" | sort -nu | paste -sd";")" \
      >/dev/null
    cmake --build "$build" -j"$(nproc)"
    stage=$(mktemp -d /tmp/gshmem-prebuilt.XXXXXX)
    trap 'rm -rf "$stage" "$tarball.part"' EXIT
    mkdir -p "$stage/build-gpu/prebuilt-lib"
    # everything but object files, static libraries, CMake's own folders and the Python environment
    tar -C "$build" --exclude=CMakeFiles --exclude=pyenv --exclude=Testing --exclude=_deps --exclude='*.o' \
      --exclude='*.a' --exclude='*.d' --exclude=CMakeCache.txt -cf - . | tar -C "$stage/build-gpu" -xf -
    libs=()
    while IFS= read -r -d '' f; do
      if file -b "$f" | grep -q '^ELF 64-bit LSB.*x86-64'; then  # not the cubins
        strip --strip-debug "$f"
        while read -r lib; do libs+=("$lib"); done < <(ldd "$f" 2>/dev/null | awk '$3 ~ /^\// {print $3}')
      fi
    done < <(find "$stage/build-gpu" -type f -print0)
    for lib in $(printf '%s\n' "${libs[@]}" | sort -u); do
      case $(basename "$lib") in
        libc.so*|libm.so*|libdl.so*|librt.so*|libpthread.so*|ld-linux*|libstdc++.so*|libgcc_s.so*|libcuda.so*) ;;
        libmpi*|libopen-*|libpmix*|libhwloc*|libevent*|libucp*|libucs*|libuct*|libucm*|libfabric*) ;;  # MPI's own
        libcudart*|libnccl*|libnvrtc*|libcublas*|libudev*|libz.so*) ;;  # CUDA's and the system's, there too
        *) case $lib in "$build"/*) ;; *) cp -L "$lib" "$stage/build-gpu/prebuilt-lib/" ;; esac ;;
      esac
    done
    # the Python package built with CUDA for the GPU machine's Python (3.12 there: PREBUILT_PYTHON names another),
    # so that the Python steps install it by a copy instead of a ~180 s build (scripts/python-tests.sh,
    # GSHMEM_PY_PREBUILT); without that Python here they build it as before
    pypre=${PREBUILT_PYTHON:-}
    if [ -z "$pypre" ]; then  # the first python3.12 that runs (pyenv's shim is on PATH but fails where 3.12 is
      for c in $(command -v python3.12) "$HOME"/.pyenv/versions/3.12*/bin/python3.12; do  # not the active version)
        if "$c" -c 'import sys; assert sys.version_info[:2] == (3, 12)' 2>/dev/null; then pypre=$c; break; fi
      done
    fi
    if [ -n "$pypre" ]; then
      # (pip fetches scikit-build-core and nanobind into its build environment: this machine has the internet)
      if "$pypre" -m pip install -q --disable-pip-version-check --root-user-action=ignore --no-deps \
           --target "$stage/build-gpu/py-site" "$root" --config-settings=cmake.define.GSHMEM_WITH_CUDA=ON \
           --config-settings=cmake.define.GSHMEM_CUDA_ARCHITECTURES=90; then
        rm -rf "$stage/build-gpu/py-site"/gshmem/__pycache__
        echo 90 >"$stage/build-gpu/py-site/cuda-arch.txt"  # the architecture it holds code for
      else
        rm -rf "$stage/build-gpu/py-site"
        echo "gpu-prebuilt.sh: WARN: the Python package did not build with $pypre (above): packed without it;" \
             "the GPU machine's Python steps build the package"
      fi
    else
      echo "gpu-prebuilt.sh: no python3.12 here (PREBUILT_PYTHON): the GPU machine's Python steps build the package"
    fi
    # the tools the CTest files name by absolute path, rewritten by unpack to wherever the device has them
    tools=$(find "$build" -name CTestTestfile.cmake -print0 | { xargs -0 grep -oh '"/[^" ]*' || true; } |
              tr -d '"' | { grep -v "^$root/" || true; } | { grep -vx '/bin/sh' || true; } | sort -u | paste -sd' ')
    (cd "$root" && source_files | tr '\n' '\0' | xargs -0 sha256sum) >"$stage/build-gpu/prebuilt-sources.sha256"
    { echo "root=$root"; echo "pes=$(echo 2 "${PES:-2}" | tr " " "\n" | sort -nu | paste -sd" ")"; echo "tools=$tools"
      echo "commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
      echo "dirty=$(git -C "$root" status --porcelain -- "${sources[@]}" | wc -l)"
      echo "made=$(date -u +%FT%TZ)"
      if [ -d "$stage/build-gpu/py-site" ]; then
        echo "python=$("$pypre" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
      fi
      } >"$stage/build-gpu/prebuilt.txt"
    rm -f "$dir/build-gpu.tar.gz"  # the former name
    # written beside, checked, then renamed: a device call never carries a half-written or damaged tarball
    tar cf - -C "$stage" build-gpu | xz -T"$(nproc)" --lzma2=preset=6,dict=128MiB >"$tarball.part"
    xz -t "$tarball.part" || { echo "gpu-prebuilt.sh: the new tarball does not read back (xz -t); not kept"; exit 1; }
    mv -f "$tarball.part" "$tarball"
    # the tree's commit for the device's scripts (gpu-all.sh exports it as GSHMEM_COMMIT unless set): the device's
    # tree has no .git, and git there answered 1af3f53 for a tree at d3e51c0 (session 26)
    { git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown; } | tr -d '\n' >"$dir/commit.txt"
    [ -z "$(git -C "$root" status --porcelain 2>/dev/null)" ] || printf -- '-dirty' >>"$dir/commit.txt"
    echo "gpu-prebuilt.sh: $tarball ($(du -h "$tarball" | cut -f1)); $(tr '\n' ' ' <"$stage/build-gpu/prebuilt.txt")"
    echo "bundled: $(ls "$stage/build-gpu/prebuilt-lib" | tr '\n' ' ')"
    ;;
  unpack)
    [ -f "$tarball" ] || { echo "gpu-prebuilt.sh: $tarball is missing: run 'scripts/gpu-prebuilt.sh pack' on the" \
                                "build machine and carry .gpu-prebuilt"; exit 1; }
    rm -rf "$build"
    if command -v xz >/dev/null; then xz -dc "$tarball"
    else python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), sys.stdout.buffer)' "$tarball"
    fi | tar xf - -C "$root"
    old=$(sed -n 's/^root=//p' "$build/prebuilt.txt")
    changed=$(cd "$root" && { sha256sum -c --quiet build-gpu/prebuilt-sources.sha256 2>/dev/null || true; } |
                sed 's/: FAILED.*//'; LC_ALL=C comm -13 <(awk '{print $2}' build-gpu/prebuilt-sources.sha256 | LC_ALL=C sort) \
                <(source_files | grep -v '^python/'))  # new files; python/ gets build outputs from other steps
    if [ -n "$changed" ] && [ -z "${PREBUILT_ANY:-}" ]; then
      echo "gpu-prebuilt.sh: build-gpu was built from other sources than this tree's ($(tr '\n' ' ' \
        <"$build/prebuilt.txt")); differing, missing or new here: $(echo "$changed" | head -20 | tr '\n' ' ')"
      echo "gpu-prebuilt.sh: fix: run 'scripts/gpu-prebuilt.sh pack' after the last change (PREBUILT_ANY=1 uses it)"
      rm -rf "$build"
      exit 1
    fi
    # The Python package: gone where its sources changed, also under PREBUILT_ANY, and where a file was added to
    # them since (the check above leaves new files under python/ out: other steps write there), or where a library
    # it needs is missing here; the Python steps then build it (scripts/python-tests.sh)
    if [ -d "$build/py-site" ]; then
      pystale=$(printf '%s\n' "$changed" | grep -E '^(python/|pyproject\.toml$)' || true
                cd "$root" && LC_ALL=C comm -13 <(awk '{print $2}' build-gpu/prebuilt-sources.sha256 | LC_ALL=C sort) \
                  <(source_files | grep -E '^python/(gshmem|src)/'))
      pymissing=$(ldd "$build"/py-site/gshmem/*.so* 2>/dev/null | { grep 'not found' || true; })
      if [ -n "$pystale$pymissing" ]; then
        rm -rf "$build/py-site"
        echo "gpu-prebuilt.sh: the packed Python package is not used (sources differ or were added:" \
             "$(echo "$pystale" | head -5 | tr '\n' ' ')libraries missing: ${pymissing:-none}):" \
             "the Python steps build it"
      fi
    fi
    if [ "$old" != "$root" ]; then  # CTest files name the build machine's paths
      find "$build" -name 'CTestTestfile.cmake' -print0 |
        xargs -0 sed -i "s#$(sed_escape "$old")/#$(sed_escape "$root")/#g"
    fi
    # and its tools (cmake, python3, mpiexec, nvcc): the one of the same name on this machine's PATH
    for tool in $(sed -n 's/^tools=//p' "$build/prebuilt.txt"); do
      [ -x "$tool" ] && continue
      if ! here=$(command -v "$(basename "$tool")"); then
        echo "gpu-prebuilt.sh: WARN: $(basename "$tool") (the CTest files' $tool) is not on this PATH: its tests fail"
        continue
      fi
      find "$build" -name 'CTestTestfile.cmake' -print0 |
        xargs -0 sed -i "s#\"$(sed_escape "$tool")\"#\"$(sed_escape "$here")\"#g"
      echo "gpu-prebuilt.sh: $tool -> $here"
    done
    echo "gpu-prebuilt.sh: build-gpu unpacked ($(tr '\n' ' ' <"$build/prebuilt.txt"))"
    missing=$(LD_LIBRARY_PATH=$build/prebuilt-lib:$build/lib ldd "$build/bin/gshmemrun" "$build/lib/libgshmem.so" |
                { grep 'not found' || true; })
    [ -z "$missing" ] || { echo "gpu-prebuilt.sh: libraries missing here: $missing"; exit 1; }
    ;;
  *) echo "usage: scripts/gpu-prebuilt.sh pack|unpack"; exit 2 ;;
esac
