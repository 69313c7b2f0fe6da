# tlsc_add_kernel: compile a .tls kernel script to PTX at build time.
#
#   tlsc_add_kernel(TARGET name SOURCE file.tls
#                   [DEFINES name=value ...] [OUTPUT file.ptx])
#
# Adds a target `name` (built by `all`) whose one job is
# `tlsc [-D name=value ...] file.tls -o file.ptx`. The PTX is rebuilt when
# the script or the compiler changes. OUTPUT defaults to
# ${CMAKE_CURRENT_BINARY_DIR}/<name>.ptx; a relative SOURCE or OUTPUT is
# taken from the current source or binary folder. The target's property
# TLSC_PTX holds the PTX path, for example
#
#   tlsc_add_kernel(TARGET matmul SOURCE matmul_v5.tls DEFINES num_stages=4)
#   add_executable(app main.c)
#   target_link_libraries(app PRIVATE tlsc::runtime)
#   add_dependencies(app matmul)
#   target_compile_definitions(app PRIVATE
#     MATMUL_PTX="$<TARGET_PROPERTY:matmul,TLSC_PTX>")
#
# The compiler is tlsc::tlsc: the installed one after find_package(tlsc),
# or the tlsc target itself inside the tlsc source tree.

# tlsc_add_kernel's compiler: the target whose executable runs tlsc.
function(_tlsc_compiler_target out)
  if(TARGET tlsc::tlsc)
    set(${out} tlsc::tlsc PARENT_SCOPE)
  elseif(TARGET tlsc)
    set(${out} tlsc PARENT_SCOPE)
  else()
    message(FATAL_ERROR "tlsc_add_kernel: no tlsc compiler target (call find_package(tlsc) first)")
  endif()
endfunction()

# The function itself (see the top of this file).
function(tlsc_add_kernel)
  cmake_parse_arguments(PARSE_ARGV 0 ARG "" "TARGET;SOURCE;OUTPUT" "DEFINES")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "tlsc_add_kernel: unknown arguments: ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_TARGET OR NOT ARG_SOURCE)
    message(FATAL_ERROR "tlsc_add_kernel: TARGET and SOURCE are required")
  endif()
  get_filename_component(source "${ARG_SOURCE}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  if(NOT EXISTS "${source}")
    message(FATAL_ERROR "tlsc_add_kernel: ${ARG_SOURCE} not found")
  endif()
  if(NOT ARG_OUTPUT)
    set(ARG_OUTPUT "${ARG_TARGET}.ptx")
  endif()
  get_filename_component(output "${ARG_OUTPUT}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")

  set(defines "")
  foreach(define IN LISTS ARG_DEFINES)
    if(NOT define MATCHES "^[A-Za-z_][A-Za-z_0-9]*=.+$")
      message(FATAL_ERROR "tlsc_add_kernel: DEFINES wants name=value, got '${define}'")
    endif()
    list(APPEND defines -D "${define}")
  endforeach()

  _tlsc_compiler_target(compiler)
  # Naming the compiler target in COMMAND makes CMake run its executable
  # and build it first (in-tree); DEPENDS on its file reruns tlsc when it
  # changes. tlsc writes its output only on success, so a failed compile
  # leaves no stale PTX behind.
  add_custom_command(
    OUTPUT "${output}"
    COMMAND ${compiler} ${defines} "${source}" -o "${output}"
    DEPENDS "${source}" "$<TARGET_FILE:${compiler}>"
    COMMENT "tlsc ${ARG_SOURCE} -> ${ARG_OUTPUT}"
    VERBATIM)
  add_custom_target(${ARG_TARGET} ALL DEPENDS "${output}")
  set_target_properties(${ARG_TARGET} PROPERTIES TLSC_PTX "${output}" TLSC_SOURCE "${source}")
endfunction()
