# Specialised entries (tlsc --specialize, docs/language.md) through the
# backend and ptxas; included by tests/runtime/CMakeLists.txt (this folder's
# CMakeLists.txt belongs to the backend's tests).
#
#   ptx_specialized_metadata  the metadata block of matmul_v5 with
#                        --specialize n_size=8192 --specialize k_size=4096,8192
#                        (golden v5_specialized_meta.expected): the generic
#                        entry, then one entry per combination with its
#                        `fixed` line and constant grid and tensor maps
#   ptx_specialized_body  the specialised entry's PTX is the -D build's
#                        (specialize_body.sh), the parameter list kept
#   ptxas_specialized_v5  every entry of that file assembles with no spill,
#                        no stack frame and no wgmma serialization note
#   ptxas_fixed_v5       the -D n_size=8192 -D k_size=8192 build likewise
if(NOT TARGET tlsc)
  return()
endif()
set(spec_here ${PROJECT_SOURCE_DIR}/tests/ptxas)
set(spec_out ${CMAKE_CURRENT_BINARY_DIR}/specialize)
file(MAKE_DIRECTORY ${spec_out})
set(spec_args --specialize n_size=8192 --specialize k_size=4096,8192)
add_test(NAME ptx_specialized_metadata
  COMMAND ${PROJECT_SOURCE_DIR}/tests/check.sh ${spec_here}/v5_specialized_meta.expected --
          sh -c "'$<TARGET_FILE:tlsc>' examples/matmul_v5.tls --specialize n_size=8192 --specialize k_size=4096,8192 -o '${spec_out}/meta.ptx' && grep '^//@tls' '${spec_out}/meta.ptx'"
  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
add_test(NAME ptx_specialized_body
  COMMAND ${spec_here}/specialize_body.sh $<TARGET_FILE:tlsc> examples/matmul_v5.tls
          MatmulWGMMAV5__n_size_8192__k_size_8192 ${spec_out} ${spec_args}
          -- -D n_size=8192 -D k_size=8192
  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
if(TLSC_PTXAS)
  add_test(NAME ptxas_specialized_v5
    COMMAND ${spec_here}/ptxas_check.sh ${TLSC_PTXAS} ${spec_out}/v5.ptx
            MatmulWGMMAV5=215040 MatmulWGMMAV5__n_size_8192__k_size_4096=215040
            MatmulWGMMAV5__n_size_8192__k_size_8192=215040 --
            $<TARGET_FILE:tlsc> examples/matmul_v5.tls ${spec_args} -o ${spec_out}/v5.ptx
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  add_test(NAME ptxas_fixed_v5
    COMMAND ${spec_here}/ptxas_check.sh ${TLSC_PTXAS} ${spec_out}/fixed.ptx MatmulWGMMAV5=215040 --
            $<TARGET_FILE:tlsc> examples/matmul_v5.tls -D n_size=8192 -D k_size=8192
            -o ${spec_out}/fixed.ptx
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
