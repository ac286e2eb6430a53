# Per-ISA kernels live in their own translation units. The file name's suffix picks the target flags,
# so a new kernel needs only its line in src/CMakeLists.txt: foo_avx2.cpp gets AVX2+FMA+F16C, foo_avx512.cpp gets
# AVX-512 F/BW/DQ/VL, foo_avx512vnni.cpp adds VNNI, foo_avx512gfni.cpp VNNI and GFNI,
# foo_avx512bf16.cpp BF16, foo_avxvnni.cpp AVX2 with AVX-VNNI, foo_f16c.cpp gets F16C, foo_amx.cpp gets AMX.
# Everything else is built for the baseline x86-64 target, so one binary runs on any x86-64 CPU and
# picks kernels at run time.
set(BRICK_FLAGS_f16c -mf16c)
set(BRICK_FLAGS_avx2 -mavx2 -mfma -mf16c)
# GCC schedules instructions only after register allocation on x86 unless told otherwise; the AVX-512
# k-quant dots run 4-12% faster with the pre-allocation scheduler (bench/RESULTS.md), which
# interleaves independent blocks so that fewer long dependency chains wait in the schedulers.
set(BRICK_SCHEDULE_FLAGS $<$<CXX_COMPILER_ID:GNU>:-fschedule-insns> $<$<CXX_COMPILER_ID:GNU>:-fsched-pressure>)
set(BRICK_FLAGS_avx512 -mavx2 -mfma -mf16c -mavx512f -mavx512bw -mavx512dq -mavx512vl ${BRICK_SCHEDULE_FLAGS})
set(BRICK_FLAGS_avx512vnni ${BRICK_FLAGS_avx512} -mavx512vnni)
set(BRICK_FLAGS_avx512gfni ${BRICK_FLAGS_avx512vnni} -mgfni)
set(BRICK_FLAGS_avx512bf16 ${BRICK_FLAGS_avx512} -mavx512bf16)
set(BRICK_FLAGS_avxvnni ${BRICK_FLAGS_avx2} -mavxvnni)
set(BRICK_FLAGS_amx ${BRICK_FLAGS_avx512} -mamx-tile -mamx-int8 -mamx-bf16)

function(brick_apply_isa_flags target)
  get_target_property(sources ${target} SOURCES)
  foreach(source IN LISTS sources)
    foreach(isa IN ITEMS avx512gfni avx512vnni avx512bf16 avxvnni avx512 avx2 f16c amx)
      if(source MATCHES "_${isa}\\.cpp$")
        set_source_files_properties(${source} TARGET_DIRECTORY ${target}
                                    PROPERTIES COMPILE_OPTIONS "${BRICK_FLAGS_${isa}}")
        break()
      endif()
    endforeach()
  endforeach()
endfunction()

function(brick_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic)
  if(BRICK_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
