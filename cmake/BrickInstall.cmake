# Installs Brick the way CMake packages are consumed: headers, the library, the brick tool, a
# brickConfig.cmake with the brick::brick target (find_package(brick)) and a brick.pc (pkg-config).
include(CMakePackageConfigHelpers)

set(BRICK_CMAKE_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/brick CACHE STRING
    "Where brickConfig.cmake is installed, relative to the prefix")
set(BRICK_PKGCONFIG_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig CACHE STRING
    "Where brick.pc is installed, relative to the prefix")

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/brick TYPE INCLUDE FILES_MATCHING PATTERN "*.hpp")
install(TARGETS brick EXPORT brickTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT brickTargets NAMESPACE brick:: DESTINATION ${BRICK_CMAKE_INSTALL_DIR})

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/brickConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/brickConfig.cmake
                              INSTALL_DESTINATION ${BRICK_CMAKE_INSTALL_DIR})
# 0.x releases make no promise across minor versions.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/brickConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/brickConfig.cmake ${PROJECT_BINARY_DIR}/brickConfigVersion.cmake
        DESTINATION ${BRICK_CMAKE_INSTALL_DIR})

if(TARGET brick_cli)
  install(TARGETS brick_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

# brick.pc finds the prefix from its own place (${pcfiledir}), so `cmake --install --prefix` works;
# install dirs given as absolute paths are written as they are (and a brick.pc installed to an
# absolute dir names the configured prefix). pkg-config knows a static library's own dependencies
# only under --static, which few callers pass; the static brick therefore lists them under Libs.
if(IS_ABSOLUTE "${BRICK_PKGCONFIG_INSTALL_DIR}")
  set(BRICK_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH BRICK_PC_PREFIX ${CMAKE_INSTALL_PREFIX}/${BRICK_PKGCONFIG_INSTALL_DIR} ${CMAKE_INSTALL_PREFIX})
  set(BRICK_PC_PREFIX "\${pcfiledir}/${BRICK_PC_PREFIX}")
endif()
foreach(dir IN ITEMS INCLUDEDIR LIBDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${dir}}")
    set(BRICK_PC_${dir} "${CMAKE_INSTALL_${dir}}")
  else()
    set(BRICK_PC_${dir} "\${prefix}/${CMAKE_INSTALL_${dir}}")
  endif()
endforeach()
set(BRICK_PC_LINK_DEPS "-pthread")
foreach(library IN LISTS CMAKE_DL_LIBS)
  string(APPEND BRICK_PC_LINK_DEPS " -l${library}")
endforeach()
configure_file(${CMAKE_CURRENT_LIST_DIR}/brick.pc.in ${PROJECT_BINARY_DIR}/brick.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/brick.pc DESTINATION ${BRICK_PKGCONFIG_INSTALL_DIR})
