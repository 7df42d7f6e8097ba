# Runs at test time: install the built gshmem into WORK_DIR/prefix, then configure and build a project written
# for NVIDIA NVSHMEM (find_package(NVSHMEM), nvshmem::* targets) against it, once through NVSHMEM_DIR and once
# through CMAKE_PREFIX_PATH, and run its host program as one PE without a launcher.
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(rc)
  message(FATAL_ERROR "cmake --install failed (${rc})")
endif()
file(GLOB cfg ${WORK_DIR}/prefix/lib*/cmake/nvshmem/NVSHMEMConfig.cmake)
if(NOT cfg)
  message(FATAL_ERROR "the install has no lib/cmake/nvshmem/NVSHMEMConfig.cmake")
endif()
get_filename_component(nvshmem_dir ${cfg} DIRECTORY)
foreach(how dir prefix)
  if(how STREQUAL "dir")
    set(arg -DNVSHMEM_DIR=${nvshmem_dir})
  else()
    set(arg -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix)
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${SRC_DIR} -B ${WORK_DIR}/build_${how} ${arg} -DWITH_CUDA=${WITH_CUDA}
                  RESULT_VARIABLE rc)
  if(rc)
    message(FATAL_ERROR "configuring the NVSHMEM consumer with ${arg} failed (${rc})")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/build_${how} RESULT_VARIABLE rc)
  if(rc)
    message(FATAL_ERROR "building the NVSHMEM consumer (${how}) failed (${rc})")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=RANK --unset=WORLD_SIZE --unset=GSHMEM_RANK
                          --unset=OMPI_COMM_WORLD_SIZE --unset=OMPI_COMM_WORLD_RANK --unset=PMIX_RANK
                          GSHMEM_DEVICE=cpu ${WORK_DIR}/build_${how}/host_consumer RESULT_VARIABLE rc)
  if(rc)
    message(FATAL_ERROR "the NVSHMEM consumer's host program failed (${rc})")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK_DIR})
