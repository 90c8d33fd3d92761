include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The components, in build order (each after those it is built on): one export set per
# component and kind, so that find_package(postbox COMPONENTS barrier) reads, and asks for the
# dependencies of, the barrier and what it is built on only (cmake/postboxConfig.cmake.in).
set(_postbox_components runtime emulator collectives barrier frontend)
if(TARGET postbox_cluster)  # built with MPI
  list(APPEND _postbox_components cluster)
endif()

# What a find_package() or pkg-config user needs, per third-party target a component links.
#   find: the config file's line that finds it; pc_requires: the pkg-config module a consumer of
#   the component needs too (public dependencies only); pc_lib: its flag for a static link.
set(_postbox_dep_find_Threads::Threads "find_dependency(Threads)")
set(_postbox_dep_pclib_Threads::Threads "-pthread")
set(_postbox_dep_find_PkgConfig::HWLOC
  "find_dependency(PkgConfig)\n  pkg_check_modules(HWLOC REQUIRED IMPORTED_TARGET hwloc>=2.0)")
set(_postbox_dep_pclib_PkgConfig::HWLOC "-lhwloc")
set(_postbox_dep_find_PkgConfig::CGRAPH
  "find_dependency(PkgConfig)\n  pkg_check_modules(CGRAPH REQUIRED IMPORTED_TARGET libcgraph)")
set(_postbox_dep_pclib_PkgConfig::CGRAPH "-lcgraph -lcdt")
set(_postbox_dep_find_Boost::context "find_dependency(Boost 1.74 CONFIG COMPONENTS context)")
set(_postbox_dep_pclib_Boost::context "-lboost_context")
set(_postbox_dep_find_TBB::tbb "find_dependency(TBB CONFIG)")
set(_postbox_dep_pclib_TBB::tbb "-ltbb")
set(_postbox_dep_find_nlohmann_json::nlohmann_json "find_dependency(nlohmann_json 3 CONFIG)")
set(_postbox_dep_pcreq_nlohmann_json::nlohmann_json "nlohmann_json")
set(_postbox_dep_find_MPI::MPI_CXX "_postbox_find_mpi()")
set(_postbox_dep_pcreq_MPI::MPI_CXX "ompi-c")

set(_postbox_descr_runtime "postbox runtime: topology, teams of threads and fibers, mailboxes, wait policy, calibration, plans")
set(_postbox_descr_emulator "postbox emulator: the Delta, Paragon, T3D, MANNA and model machines (postal, sr, logp)")
set(_postbox_descr_collectives "postbox collectives: postal arithmetic, tree shapes, combine, s-to-p, C3 routing, plans")
set(_postbox_descr_barrier "postbox barrier: barriers for parallel loops (C API postbox/barrier.h, C++ postbox/barrier/barrier.hpp)")
set(_postbox_descr_frontend "postbox frontend: machine descriptions, plan selection and writers as the CLI reads and prints them")
set(_postbox_descr_cluster "postbox cluster: jobs of MPI processes x threads")

file(RELATIVE_PATH POSTBOX_PC_TO_PREFIX "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
string(REGEX REPLACE "/$" "" POSTBOX_PC_TO_PREFIX "${POSTBOX_PC_TO_PREFIX}")

set(POSTBOX_CONFIG_COMPONENTS "")
set(_postbox_headers "")
foreach(c IN LISTS _postbox_components)
  list(APPEND _postbox_headers ${c}/include/)
  # The components it is built on (closure, in build order) and its third-party links.
  get_target_property(links postbox_${c} LINK_LIBRARIES)
  get_target_property(public postbox_${c} INTERFACE_LINK_LIBRARIES)
  set(needs "")
  set(find_shared "")
  set(find_static "")
  set(pc_requires "")
  set(pc_libs "")
  foreach(lib IN LISTS links)
    if(lib MATCHES "^postbox::(.+)$")
      list(APPEND needs ${CMAKE_MATCH_1} ${_postbox_needs_${CMAKE_MATCH_1}})
    elseif(DEFINED _postbox_dep_find_${lib})
      string(APPEND find_static "  ${_postbox_dep_find_${lib}}\n")
      if(lib IN_LIST public)
        string(APPEND find_shared "  ${_postbox_dep_find_${lib}}\n")
        if(DEFINED _postbox_dep_pcreq_${lib})
          list(APPEND pc_requires ${_postbox_dep_pcreq_${lib}})
        endif()
      endif()
      if(DEFINED _postbox_dep_pclib_${lib})
        list(APPEND pc_libs ${_postbox_dep_pclib_${lib}})
      endif()
    elseif(NOT lib MATCHES "^\\$<BUILD_INTERFACE:")
      message(FATAL_ERROR "PostboxInstall.cmake: postbox_${c} links ${lib}, which the package does not know how to find")
    endif()
  endforeach()
  set(ordered "")
  foreach(d IN LISTS _postbox_components)
    if(d IN_LIST needs)
      list(APPEND ordered ${d})
    endif()
  endforeach()
  set(_postbox_needs_${c} ${ordered})
  set(_postbox_pclibs_${c} ${pc_libs})
  set(_postbox_pcreq_${c} ${pc_requires})
  foreach(d IN LISTS ordered)
    list(APPEND _postbox_pclibs_${c} ${_postbox_pclibs_${d}})
    list(APPEND _postbox_pcreq_${c} ${_postbox_pcreq_${d}})
  endforeach()
  list(REMOVE_DUPLICATES _postbox_pcreq_${c})
  string(APPEND POSTBOX_CONFIG_COMPONENTS
    "set(_postbox_needs_${c} \"${ordered}\")\n"
    "macro(_postbox_find_shared_${c})\n${find_shared}endmacro()\n"
    "macro(_postbox_find_static_${c})\n${find_static}endmacro()\n")

  install(TARGETS postbox_${c} EXPORT postbox-${c}-static
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(EXPORT postbox-${c}-static NAMESPACE postbox:: FILE postbox-${c}-static-targets.cmake
    DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/postbox)
  if(POSTBOX_BUILD_SHARED)
    install(TARGETS postbox_${c}_shared EXPORT postbox-${c}-shared
      LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
      INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
    install(EXPORT postbox-${c}-shared NAMESPACE postbox:: FILE postbox-${c}-shared-targets.cmake
      DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/postbox)
  endif()

  # pkg-config: postbox-<component>.pc. With shared libraries `--libs` is the component's
  # library alone (it carries the rest as NEEDED entries); `--static --libs` adds what a static
  # link needs. Third-party libraries a consumer never includes are flags (Libs.private), not
  # Requires.private, so that pkg-config does not ask for their -dev packages.
  set(PC_COMPONENT ${c})
  set(PC_DESCRIPTION "${_postbox_descr_${c}}")
  string(REPLACE ";" ", " PC_REQUIRES "${_postbox_pcreq_${c}}")
  set(static_libs "")
  list(REVERSE ordered)
  foreach(d IN LISTS ordered)
    list(APPEND static_libs -lpostbox_${d})
  endforeach()
  set(third ${_postbox_pclibs_${c}})
  list(REMOVE_DUPLICATES third)
  list(REMOVE_ITEM third -pthread)
  list(APPEND static_libs ${third} -lstdc++ -lm -pthread)
  string(REPLACE ";" " " static_libs "${static_libs}")
  if(POSTBOX_BUILD_SHARED)
    set(PC_LIBS "-lpostbox_${c}")
    set(PC_LIBS_PRIVATE "${static_libs}")
  else()
    set(PC_LIBS "-lpostbox_${c} ${static_libs}")
    set(PC_LIBS_PRIVATE "")
  endif()
  configure_file(cmake/postbox.pc.in ${PROJECT_BINARY_DIR}/pkgconfig/postbox-${c}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/pkgconfig/postbox-${c}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()

install(DIRECTORY ${_postbox_headers} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
set(POSTBOX_INSTALLED_COMPONENTS "${_postbox_components}")
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
install(DIRECTORY profiles/ DESTINATION ${CMAKE_INSTALL_DATADIR}/postbox/profiles FILES_MATCHING PATTERN "*.toml")
# `postbox bench barrier` runs the OpenMP competitors from its own directory.
foreach(helper postbox_omp_gomp postbox_omp_llvm)
  if(TARGET ${helper})
    install(TARGETS ${helper} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  endif()
endforeach()
