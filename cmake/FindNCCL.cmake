# Finds NCCL in the CUDA toolkit folder or the distro's folders. Defines NCCL::nccl.
include(FindPackageHandleStandardArgs)
set(_nccl_hints ${NCCL_ROOT} $ENV{NCCL_ROOT} $ENV{NCCL_HOME} ${CUDAToolkit_LIBRARY_ROOT} ${CUDAToolkit_TARGET_DIR})
find_path(NCCL_INCLUDE_DIR nccl.h
  HINTS ${_nccl_hints} ${CUDAToolkit_INCLUDE_DIRS}
  PATH_SUFFIXES include
  PATHS /usr/include /usr/include/${CMAKE_LIBRARY_ARCHITECTURE})
find_library(NCCL_LIBRARY nccl
  HINTS ${_nccl_hints} ${CUDAToolkit_LIBRARY_DIR}
  PATH_SUFFIXES lib64 lib lib/${CMAKE_LIBRARY_ARCHITECTURE}
  PATHS /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE} /usr/lib64 /usr/lib)
if(NCCL_INCLUDE_DIR AND EXISTS "${NCCL_INCLUDE_DIR}/nccl.h")
  file(STRINGS "${NCCL_INCLUDE_DIR}/nccl.h" _lines REGEX "#define NCCL_(MAJOR|MINOR|PATCH) +[0-9]+")
  foreach(_part MAJOR MINOR PATCH)
    string(REGEX MATCH "NCCL_${_part} +([0-9]+)" _m "${_lines}")
    set(_nccl_${_part} "${CMAKE_MATCH_1}")
  endforeach()
  set(NCCL_VERSION "${_nccl_MAJOR}.${_nccl_MINOR}.${_nccl_PATCH}")
endif()
find_package_handle_standard_args(NCCL REQUIRED_VARS NCCL_LIBRARY NCCL_INCLUDE_DIR
                                  VERSION_VAR NCCL_VERSION)
if(NCCL_FOUND AND NOT TARGET NCCL::nccl)
  add_library(NCCL::nccl UNKNOWN IMPORTED)
  set_target_properties(NCCL::nccl PROPERTIES
    IMPORTED_LOCATION "${NCCL_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${NCCL_INCLUDE_DIR}")
endif()
mark_as_advanced(NCCL_INCLUDE_DIR NCCL_LIBRARY)
