# Runs at test time: install the built gshmem into WORK_DIR/prefix, then configure+build the consumer project with
# find_package(gshmem), and compile+link its source again through pkg-config.
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(rc)
  message(FATAL_ERROR "cmake --install failed (${rc})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SRC_DIR} -B ${WORK_DIR}/build -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix
                RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "configuring the consumer with find_package(gshmem) failed (${rc})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/build RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "building the consumer failed (${rc})")
endif()
execute_process(COMMAND ${WORK_DIR}/build/consumer RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "the consumer (single PE, no launcher) failed (${rc})")
endif()
find_program(PKG_CONFIG pkg-config)
if(PKG_CONFIG)
  set(ENV{PKG_CONFIG_PATH} ${WORK_DIR}/prefix/lib/pkgconfig:${WORK_DIR}/prefix/lib64/pkgconfig)
  execute_process(COMMAND ${PKG_CONFIG} --cflags --libs gshmem OUTPUT_VARIABLE flags RESULT_VARIABLE rc
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(rc)
    message(FATAL_ERROR "pkg-config does not find gshmem.pc")
  endif()
  separate_arguments(flags UNIX_COMMAND "${flags}")
  execute_process(COMMAND c++ -std=c++17 ${SRC_DIR}/consumer.cpp ${flags} -o ${WORK_DIR}/consumer_pc
                  RESULT_VARIABLE rc)
  if(rc)
    message(FATAL_ERROR "compiling the consumer with pkg-config flags failed")
  endif()
  # it must start as built: no LD_LIBRARY_PATH (the .pc file carries the library's run path)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=LD_LIBRARY_PATH ${WORK_DIR}/consumer_pc
                  RESULT_VARIABLE rc)
  if(rc)
    message(FATAL_ERROR "the consumer built with pkg-config flags does not run (${rc}): is libgshmem's directory "
                        "in the .pc file's run path?")
  endif()
endif()
file(REMOVE_RECURSE ${WORK_DIR})
