# A component's libraries.
#
# postbox_component(<component> <sources>...) makes postbox_<component>, the static library
# (postbox::<component>, exported as <component>) with the component's include/ as its public
# headers and the project's warning options; the component's CMakeLists.txt then links what it
# needs and ends with postbox_shared_library().
#
# Shared libraries beside the static ones.
#
# postbox_shared_library(postbox_<component>) makes postbox_<component>_shared, a shared library
# (libpostbox_<component>.so.<major>.<minor>) linked from the objects the static library was
# compiled from: nothing is compiled twice. It is called at the end of a component's
# CMakeLists.txt, after its last target_link_libraries(), and derives its links from the static
# library's:
#   - another postbox component (postbox::X) becomes its shared library (postbox_X_shared),
#     public or private as in the static library;
#   - a public third-party dependency (MPI for cluster, nlohmann_json for frontend's headers)
#     stays public: the consumer needs its headers;
#   - a private one (hwloc, Boost.Context, oneTBB) is linked privately into the shared library,
#     so a program linking libpostbox_barrier.so names nothing else at link time.
# Only the public API is exported (cmake/postbox.map): the C API (postbox_*) and namespace
# postbox with its type information and vtables; the instantiations of std, Boost, fmt and
# nlohmann::json templates the objects carry stay local. RUNPATH $ORIGIN: the libraries find
# each other wherever the package is unpacked.
#
# In the build tree postbox::<component> stays the static library (tests, benches and the CLI
# link it); the installed package offers either (cmake/postboxConfig.cmake.in).
function(postbox_component component)
  set(static postbox_${component})
  add_library(${static} STATIC ${ARGN})
  add_library(postbox::${component} ALIAS ${static})
  set_target_properties(${static} PROPERTIES EXPORT_NAME ${component} OUTPUT_NAME ${static})
  target_include_directories(${static} PUBLIC
    $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_link_libraries(${static} PRIVATE $<BUILD_INTERFACE:postbox_options>)
endfunction()

function(postbox_shared_library static)
  if(NOT POSTBOX_BUILD_SHARED)
    return()
  endif()
  string(REGEX REPLACE "^postbox_" "" component "${static}")
  set(shared ${static}_shared)
  add_library(${shared} SHARED $<TARGET_OBJECTS:${static}>)
  set_target_properties(${shared} PROPERTIES
    OUTPUT_NAME ${static}
    EXPORT_NAME ${component}
    VERSION ${PROJECT_VERSION}
    SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR}
    INSTALL_RPATH "$ORIGIN"
    LINK_DEPENDS ${PROJECT_SOURCE_DIR}/cmake/postbox.map)
  foreach(prop INTERFACE_INCLUDE_DIRECTORIES INTERFACE_COMPILE_FEATURES INTERFACE_COMPILE_DEFINITIONS)
    get_target_property(value ${static} ${prop})
    if(value)
      set_property(TARGET ${shared} PROPERTY ${prop} "${value}")
    endif()
  endforeach()
  get_target_property(all ${static} LINK_LIBRARIES)
  get_target_property(public ${static} INTERFACE_LINK_LIBRARIES)
  if(NOT public)
    set(public "")
  endif()
  foreach(lib IN LISTS all)
    set(scope PRIVATE)
    if(lib IN_LIST public)
      set(scope PUBLIC)
    endif()
    if(lib MATCHES "^postbox::(.+)$")
      set(lib postbox_${CMAKE_MATCH_1}_shared)
    endif()
    target_link_libraries(${shared} ${scope} ${lib})
  endforeach()
  target_link_options(${shared} PRIVATE
    "LINKER:--version-script=${PROJECT_SOURCE_DIR}/cmake/postbox.map" "LINKER:--no-undefined")
  add_dependencies(postbox_shared_libraries ${shared})
  set_property(GLOBAL APPEND PROPERTY POSTBOX_SHARED_COMPONENTS ${component})
endfunction()
