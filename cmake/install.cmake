# Installation: libraries, headers, a CMake package (find_package(sinew CONFIG)) and
# pkg-config files. tests/install proves both ways with a tiny consumer.
include(CMakePackageConfigHelpers)

set(SINEW_INSTALL_TARGETS sinew)
if(TARGET sinew_import)
  list(APPEND SINEW_INSTALL_TARGETS sinew_import)
endif()
# The Vulkan module (sinew_vulkan.h comes with the header folder). Its link interface names the
# system loader as plain `vulkan`, so the package config needs no find_dependency(Vulkan).
if(TARGET sinew_vulkan)
  list(APPEND SINEW_INSTALL_TARGETS sinew_vulkan)
endif()
# The headless renderer (sinew_render.h), shared builds only: a static one would hand libpng
# to every consumer's link, and only the samples need it that way.
if(TARGET sinew_render AND SINEW_SHARED)
  list(APPEND SINEW_INSTALL_TARGETS sinew_render)
endif()
install(TARGETS ${SINEW_INSTALL_TARGETS} EXPORT sinewTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The fps-cuda plugin (built when nvcc is found): loaded, not linked, so it is no part of the
# CMake package. <libdir>/sinew is the runtime's plugin folder: sinew_world_load_plugin finds a
# bare file name there through libsinew's own location.
if(TARGET sinew_fps_cuda)
  install(TARGETS sinew_fps_cuda LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/sinew)
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/sinew DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/sinew)

set(SINEW_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/sinew)
install(EXPORT sinewTargets NAMESPACE sinew:: DESTINATION ${SINEW_CMAKE_DIR})
set(SINEW_CONFIG_NEEDS_ASSIMP OFF)
# assimp::assimp is imported in runtime/import's scope only: its cache flag says it is linked.
if(NOT SINEW_SHARED AND TARGET sinew_import AND SINEW_IMPORT_HAS_ASSIMP)
  set(SINEW_CONFIG_NEEDS_ASSIMP ON)
endif()
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/sinewConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/sinewConfig.cmake INSTALL_DESTINATION ${SINEW_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/sinewConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/sinewConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/sinewConfigVersion.cmake DESTINATION ${SINEW_CMAKE_DIR})

# pkg-config: one .pc file per installed library. The prefix is found relative to the .pc
# file, so an install moved with --prefix (or DESTDIR) stays usable.
file(RELATIVE_PATH SINEW_PC_TO_PREFIX "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
string(REGEX REPLACE "/$" "" SINEW_PC_TO_PREFIX "${SINEW_PC_TO_PREFIX}")

# sinew_configure_pc(NAME): cmake/NAME.pc.in into <libdir>/pkgconfig/NAME.pc.
function(sinew_configure_pc name)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/${name}.pc.in ${CMAKE_CURRENT_BINARY_DIR}/${name}.pc
    @ONLY)
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/${name}.pc
    DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endfunction()

# sinew: the runtime. A static one also needs what its built-in backends link (e.g. CHOLMOD
# for ps).
set(SINEW_PC_LIBS_PRIVATE "-lpthread -ldl -lm")
foreach(lib ${SINEW_BUILTIN_BACKEND_LIBS})
  if(TARGET ${lib})
    get_target_property(lib ${lib} IMPORTED_LOCATION_NONE)
    if(NOT lib)
      continue()
    endif()
  endif()
  get_filename_component(_name "${lib}" NAME_WE)
  string(REGEX REPLACE "^lib" "" _name "${_name}")
  string(APPEND SINEW_PC_LIBS_PRIVATE " -l${_name}")
endforeach()
sinew_configure_pc(sinew)

# sinew-import: the importers; a static one carries assimp.
if(TARGET sinew_import)
  set(SINEW_IMPORT_PC_REQUIRES_PRIVATE "")
  if(SINEW_CONFIG_NEEDS_ASSIMP)
    set(SINEW_IMPORT_PC_REQUIRES_PRIVATE "assimp")
  endif()
  sinew_configure_pc(sinew-import)
endif()

# sinew-vulkan: the Vulkan module; consumers call Vulkan themselves, so -lvulkan is public.
if(TARGET sinew_vulkan)
  sinew_configure_pc(sinew-vulkan)
endif()

# sinew-render: the headless renderer, installed with shared builds only (see above).
if(TARGET sinew_render AND SINEW_SHARED)
  sinew_configure_pc(sinew-render)
endif()
