# The Debian package: `./run.sh package` (cpack -G DEB) writes postbox_<version>_<arch>.deb with
# what `cmake --install` puts under /usr: the static and shared libraries, the headers, the CMake
# package and pkg-config files, the `postbox` CLI with its man pages and the machine profiles
# (and the Python module when it is built). Its dependencies on shared libraries (hwloc,
# Boost.Context, oneTBB, graphviz's cgraph, Open MPI, libstdc++) are computed by dpkg-shlibdeps;
# the -dev packages a static link or the frontend's and cluster's headers need are recommended,
# and NumPy for the Python module.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME postbox)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_DESCRIPTION "Barriers for parallel loops (C and C++), collectives on teams of threads and fibers, an emulator of the Delta, Paragon, T3D and MANNA, and the postbox command-line tool.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "postbox engineers")
set(CPACK_DEBIAN_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The shlibs control file names the postbox libraries only. CPack's own generator
# (CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS) takes every shared object in the package, the Python
# extension module too, which has no soname (no extension module does) and draws a warning.
get_property(postbox_shlibs_components GLOBAL PROPERTY POSTBOX_SHARED_COMPONENTS)
if(postbox_shlibs_components)
  set(postbox_shlibs "")
  foreach(component IN LISTS postbox_shlibs_components)
    string(APPEND postbox_shlibs
      "libpostbox_${component} ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR} postbox (= ${PROJECT_VERSION})\n")
  endforeach()
  file(WRITE ${PROJECT_BINARY_DIR}/debian/shlibs "${postbox_shlibs}")
  set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${PROJECT_BINARY_DIR}/debian/shlibs)
endif()
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "pkg-config, libhwloc-dev, libgraphviz-dev, libboost-context-dev, libtbb-dev, nlohmann-json3-dev, libopenmpi-dev, python3-numpy")
set(CPACK_PACKAGE_DIRECTORY ${PROJECT_BINARY_DIR}/package)
include(CPack)
