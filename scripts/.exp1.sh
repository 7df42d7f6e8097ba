export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 PATH=/usr/local/cuda/bin:$PATH
timeout 60 build-probe/nvlink_probe --blockput 2>&1 | tee $OUT/probe.txt
(cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DGSHMEM_CUDA_ARCHITECTURES=90 >/dev/null && cmake --build build -j32 --target gpu_device_api gshmem-bench gshmemrun) > $OUT/build.txt 2>&1 || { tail -30 $OUT/build.txt; exit 1; }
(cd build && ctest -R '^gpu_device_api$' --output-on-failure) 2>&1 | tail -15
for i in 1 2; do GSHMEM_DEVICE=gpu timeout 60 build/bin/gshmemrun -n 2 -- build/bin/gshmem-bench --suite barrier --repeats 10 --lat-iters 1000 2>&1 | grep -E "barrier|sync"; done
GSHMEM_DEVICE=gpu timeout 60 build/bin/gshmemrun -n 2 -- build/bin/gshmem-bench --suite put-bw,get-bw --scopes block --ctas 1 --sizes 16,256,4096 --dirs uni --repeats 5 2>&1 | grep -E "_bw"
