#!/usr/bin/env bash
# A GPU build made on this (GPU-less) machine, carried to the GPU machine, so that a device call spends its minutes
# on tests and benchmarks instead of a ~250 s build.
#   scripts/gpu-prebuilt.sh pack     here: configure + build build-gpu/ as scripts/gpu-check.sh would (Hopper,
#                                    GSHMEM_GPU_TESTS=ON, GSHMEM_GPU_TEST_PES="2;$PES"), then write
#                                    .gpu-prebuilt/build-gpu.tar.gz: binaries and libraries without debug sections,
#                                    the CTest files, no object files; the shared libraries they need that are not
#                                    glibc's, the compiler's, CUDA's driver or MPI's go along in build-gpu/prebuilt-lib.
#   scripts/gpu-prebuilt.sh unpack   there: unpack it into build-gpu/ and point its CTest files at this checkout.
# Then on the device: PREBUILT=1 STEPS=check scripts/gpu-all.sh (carry [".gpu-prebuilt"]): the check runs from
# build-gpu/ without building. The tarball records the commit it was built from and refuses a tree that differs in
# src/, include/ or tests/ (PREBUILT_ANY=1 skips that check).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build-gpu
dir=$root/.gpu-prebuilt
tarball=$dir/build-gpu.tar.gz
# What the tree's sources are: the hash of every file under src/, include/, tests/, CMakeLists.txt and cmake/.
tree_hash() {
  (cd "$root" && find src include tests cmake CMakeLists.txt -type f ! -name '*.pyc' -print0 | LC_ALL=C sort -z |
     xargs -0 sha256sum | sha256sum | cut -c1-16)
}
case ${1:-} in
  pack)
    grep -qx '/.gpu-prebuilt/' "$root/.gitignore" || { echo "gpu-prebuilt.sh: .gitignore must list /.gpu-prebuilt/"; exit 1; }
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGSHMEM_CUDA_ARCHITECTURES=90 \
      -DGSHMEM_GPU_TESTS=ON "-DGSHMEM_GPU_TEST_PES=$(echo 2 "${PES:-2}" | tr " " "\n" | sort -nu | paste -sd";")" \
      >/dev/null
    cmake --build "$build" -j"$(nproc)"
    stage=$(mktemp -d /tmp/gshmem-prebuilt.XXXXXX)
    trap 'rm -rf "$stage"' EXIT
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
    # the tools the CTest files name by absolute path, rewritten by unpack to wherever the device has them
    tools=$(find "$build" -name CTestTestfile.cmake -print0 | xargs -0 grep -oh '"/[^" ]*' | tr -d '"' |
              grep -v "^$root" | grep -vx '/bin/sh' | sort -u | paste -sd' ')
    { echo "root=$root"; echo "tree=$(tree_hash)"; echo "tools=$tools"
      echo "commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
      echo "dirty=$(git -C "$root" status --porcelain -- src include tests cmake CMakeLists.txt | wc -l)"
      echo "made=$(date -u +%FT%TZ)"; } >"$stage/build-gpu/prebuilt.txt"
    mkdir -p "$dir"
    tar czf "$tarball" -C "$stage" build-gpu
    echo "gpu-prebuilt.sh: $tarball ($(du -h "$tarball" | cut -f1)); $(tr '\n' ' ' <"$stage/build-gpu/prebuilt.txt")"
    echo "bundled: $(ls "$stage/build-gpu/prebuilt-lib" | tr '\n' ' ')"
    ;;
  unpack)
    [ -f "$tarball" ] || { echo "gpu-prebuilt.sh: $tarball is missing: run 'scripts/gpu-prebuilt.sh pack' on the" \
                                "build machine and carry .gpu-prebuilt"; exit 1; }
    rm -rf "$build"
    tar xzf "$tarball" -C "$root"
    old=$(sed -n 's/^root=//p' "$build/prebuilt.txt")
    want=$(sed -n 's/^tree=//p' "$build/prebuilt.txt")
    if [ "$want" != "$(tree_hash)" ] && [ -z "${PREBUILT_ANY:-}" ]; then
      echo "gpu-prebuilt.sh: build-gpu was built from other sources than this tree's ($(cat "$build/prebuilt.txt" |
        tr '\n' ' ')): pack again after the last change (PREBUILT_ANY=1 uses it anyway)"
      exit 1
    fi
    if [ "$old" != "$root" ]; then  # CTest files name the build machine's paths
      find "$build" -name 'CTestTestfile.cmake' -print0 | xargs -0 sed -i "s#$old#$root#g"
    fi
    # and its tools (cmake, python3, mpiexec, nvcc): the one of the same name on this machine's PATH
    for tool in $(sed -n 's/^tools=//p' "$build/prebuilt.txt"); do
      [ -x "$tool" ] && continue
      here=$(command -v "$(basename "$tool")") || { echo "gpu-prebuilt.sh: WARN: $(basename "$tool") (the CTest" \
                                                         "files' $tool) is not on this PATH: its tests will fail"; continue; }
      find "$build" -name 'CTestTestfile.cmake' -print0 | xargs -0 sed -i "s#\"$tool\"#\"$here\"#g"
      echo "gpu-prebuilt.sh: $tool -> $here"
    done
    echo "gpu-prebuilt.sh: build-gpu unpacked ($(tr '\n' ' ' <"$build/prebuilt.txt"))"
    missing=$(LD_LIBRARY_PATH=$build/prebuilt-lib:$build/lib ldd "$build/bin/gshmemrun" "$build/lib/libgshmem.so" |
                grep 'not found' || true)
    [ -z "$missing" ] || { echo "gpu-prebuilt.sh: libraries missing here: $missing"; exit 1; }
    ;;
  *) echo "usage: scripts/gpu-prebuilt.sh pack|unpack"; exit 2 ;;
esac
