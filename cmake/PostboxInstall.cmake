include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(_postbox_libs postbox_runtime postbox_emulator postbox_collectives postbox_barrier postbox_frontend)
set(_postbox_headers runtime/include/ emulator/include/ collectives/include/ barrier/include/ frontend/include/)
# postbox::cluster when MPI was found; the package config then finds MPI for its users.
if(TARGET postbox_cluster)
  list(APPEND _postbox_libs postbox_cluster)
  list(APPEND _postbox_headers cluster/include/)
endif()
install(TARGETS ${_postbox_libs}
  EXPORT postboxTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${_postbox_headers}
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT postboxTargets NAMESPACE postbox:: FILE postboxTargets.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/postbox)
configure_package_config_file(cmake/postboxConfig.cmake.in
  ${PROJECT_BINARY_DIR}/postboxConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/postbox)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/postboxConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/postboxConfig.cmake ${PROJECT_BINARY_DIR}/postboxConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/postbox)
if(POSTBOX_BUILD_TOOLS)
  install(TARGETS postbox_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
# pkg-config (Make, Meson, a plain compiler line): the barrier, from C or C++.
file(RELATIVE_PATH POSTBOX_PC_TO_PREFIX "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
string(REGEX REPLACE "/$" "" POSTBOX_PC_TO_PREFIX "${POSTBOX_PC_TO_PREFIX}")
configure_file(cmake/postbox-barrier.pc.in ${PROJECT_BINARY_DIR}/postbox-barrier.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/postbox-barrier.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
install(DIRECTORY profiles/ DESTINATION ${CMAKE_INSTALL_DATADIR}/postbox/profiles FILES_MATCHING PATTERN "*.toml")
# `postbox bench barrier` runs the OpenMP competitors from its own directory.
foreach(helper postbox_omp_gomp postbox_omp_llvm)
  if(TARGET ${helper})
    install(TARGETS ${helper} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  endif()
endforeach()
