# Finds cuDNN in the CUDA toolkit folder or the distro's folders (/usr/include,
# /usr/lib/<triplet>), where the Ubuntu packages put it. Defines CUDNN::cudnn.
include(FindPackageHandleStandardArgs)
set(_cudnn_hints ${CUDNN_ROOT} $ENV{CUDNN_ROOT} ${CUDAToolkit_LIBRARY_ROOT} ${CUDAToolkit_TARGET_DIR})
find_path(CUDNN_INCLUDE_DIR cudnn.h
  HINTS ${_cudnn_hints} ${CUDAToolkit_INCLUDE_DIRS}
  PATH_SUFFIXES include include/${CMAKE_LIBRARY_ARCHITECTURE}
  PATHS /usr/include /usr/include/${CMAKE_LIBRARY_ARCHITECTURE})
find_library(CUDNN_LIBRARY cudnn
  HINTS ${_cudnn_hints} ${CUDAToolkit_LIBRARY_DIR}
  PATH_SUFFIXES lib64 lib lib/${CMAKE_LIBRARY_ARCHITECTURE}
  PATHS /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE} /usr/lib64 /usr/lib)
if(CUDNN_INCLUDE_DIR)
  set(_ver_file "${CUDNN_INCLUDE_DIR}/cudnn_version.h")
  if(EXISTS "${_ver_file}")
    file(STRINGS "${_ver_file}" _lines REGEX "#define CUDNN_(MAJOR|MINOR|PATCHLEVEL) +[0-9]+")
    foreach(_part MAJOR MINOR PATCHLEVEL)
      string(REGEX MATCH "CUDNN_${_part} +([0-9]+)" _m "${_lines}")
      set(_cudnn_${_part} "${CMAKE_MATCH_1}")
    endforeach()
    set(CUDNN_VERSION "${_cudnn_MAJOR}.${_cudnn_MINOR}.${_cudnn_PATCHLEVEL}")
  endif()
endif()
find_package_handle_standard_args(CUDNN REQUIRED_VARS CUDNN_LIBRARY CUDNN_INCLUDE_DIR
                                  VERSION_VAR CUDNN_VERSION)
if(CUDNN_FOUND AND NOT TARGET CUDNN::cudnn)
  add_library(CUDNN::cudnn UNKNOWN IMPORTED)
  set_target_properties(CUDNN::cudnn PROPERTIES
    IMPORTED_LOCATION "${CUDNN_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${CUDNN_INCLUDE_DIR}")
endif()
mark_as_advanced(CUDNN_INCLUDE_DIR CUDNN_LIBRARY)
